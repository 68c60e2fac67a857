package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/forwardpay/cryptapi-go/invoice"
)

// The admin is the shop's staff's view of its invoices: a list filtered
// by status and exception or found by order number, and one invoice with
// its payments and history, where the staff decide what the rules
// cannot: settle an underpayment by hand, give an expired invoice more
// time, or cancel it.

// adminLogin signs the browser in with the key the shop printed, and
// leaves the key out of the address bar.
func (s *shop) adminLogin(w http.ResponseWriter, r *http.Request) {
	if no := s.guard.page(r); no != nil {
		s.refuse(w, r, no)
		return
	}
	if !same(r.URL.Query().Get("key"), s.guard.key) {
		s.problem(w, r, http.StatusForbidden, "This sign-in link is not valid",
			"Each run of the shop prints its own admin link when it starts: open the latest one.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: s.guard.cookie(), Value: s.guard.key, Path: "/admin/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/admin/", http.StatusSeeOther)
}

// adminPageSize is how many invoices a page of the list shows.
const adminPageSize = 25

// The statuses and exceptions the filters offer, in the admin's words.
var (
	filterStatuses   = []invoice.Status{invoice.StatusNew, invoice.StatusProcessing, invoice.StatusSettled, invoice.StatusExpired, invoice.StatusInvalid}
	filterExceptions = []invoice.Exception{invoice.ExceptionPaidPartial, invoice.ExceptionPaidLate, invoice.ExceptionWrongCoin,
		invoice.ExceptionPaidOver, invoice.ExceptionMarked, invoice.ExceptionNone}
	// attention are the exceptions a person should look at.
	attention = []invoice.Exception{invoice.ExceptionPaidPartial, invoice.ExceptionPaidLate, invoice.ExceptionWrongCoin, invoice.ExceptionPaidOver}
)

// exceptionParam is an exception as the filter form names it ("none" for
// no exception).
func exceptionParam(x invoice.Exception) string {
	if x == invoice.ExceptionNone {
		return "none"
	}
	return string(x)
}

// tab is one of the list's ready-made views.
type tab struct {
	Name, Href string
	Current    bool
}

// choice is a checkbox of the filter form.
type choice struct {
	Value, Label string
	Checked      bool
}

// adminListView is what the list shows.
type adminListView struct {
	Tabs       []tab
	Statuses   []choice
	Exceptions []choice
	Filtered   bool
	Order      string // the order number searched for
	Invoices   []*invoice.Invoice
	Next       string // the next page, "" on the last page
	First      string // the first page, "" on the first page
	Problem    string
}

// adminList lists the invoices, newest first, as the filters select, or
// those of the order whose number is searched for.
func (s *shop) adminList(w http.ResponseWriter, r *http.Request) {
	if no := s.guard.admin(r); no != nil {
		s.refuse(w, r, no)
		return
	}
	q := r.URL.Query()
	o, filters := listFilters(q)
	v := adminListView{Order: strings.TrimSpace(q.Get("order")), Filtered: len(filters) > 0}
	v.Tabs = tabs(listHref(filters), v.Order)
	v.Statuses, v.Exceptions = filterChoices(o)

	status := http.StatusOK
	var err error
	if v.Order != "" {
		// An order number, as the customer quotes it ("#1001" too).
		v.Invoices, err = s.desk.ByOrderID(r.Context(), strings.TrimPrefix(v.Order, "#"))
		if errors.Is(err, invoice.ErrInvalidOptions) {
			v.Problem, err = "An order number is a few digits, like 1001.", nil
		}
	} else {
		o.StartingAfter = q.Get("after")
		if o.StartingAfter != "" {
			v.First = listHref(filters)
		}
		v.Invoices, v.Next, err = s.listPage(r, &o, filters)
		if errors.Is(err, invoice.ErrNotFound) || errors.Is(err, invoice.ErrInvalidOptions) {
			// A page link made up, or after an invoice that is gone.
			v.Problem, status, err = "This page of the list does not exist. The newest invoices are on the first page.", http.StatusNotFound, nil
		}
	}
	if err != nil {
		s.unavailable(w, r, "admin", err)
		return
	}
	now := s.now()
	for i, inv := range v.Invoices {
		v.Invoices[i] = inv.AsOf(now)
	}
	s.render(w, r, status, "admin_list.html", "Invoices", v)
}

// listFilters reads the list's filters from its query: the statuses and
// exceptions it names that the filters offer (others are ignored), as
// ListOptions and as the query of the list's links.
func listFilters(q url.Values) (invoice.ListOptions, url.Values) {
	var o invoice.ListOptions
	filters := url.Values{}
	for _, st := range filterStatuses {
		if slices.Contains(q["status"], string(st)) {
			o.Status = append(o.Status, st)
			filters.Add("status", string(st))
		}
	}
	for _, x := range filterExceptions {
		if slices.Contains(q["exception"], exceptionParam(x)) {
			o.Exception = append(o.Exception, x)
			filters.Add("exception", exceptionParam(x))
		}
	}
	return o, filters
}

// filterChoices are the filter form's checkboxes, checked as o selects.
func filterChoices(o invoice.ListOptions) (statuses, exceptions []choice) {
	for _, st := range filterStatuses {
		statuses = append(statuses, choice{string(st), statusPills[st].Text, slices.Contains(o.Status, st)})
	}
	for _, x := range filterExceptions {
		label := word(exceptionWords, x)
		if x == invoice.ExceptionNone {
			label = "None"
		}
		exceptions = append(exceptions, choice{exceptionParam(x), label, slices.Contains(o.Exception, x)})
	}
	return statuses, exceptions
}

// listPage reads one page of the list, and the link to the next one.
func (s *shop) listPage(r *http.Request, o *invoice.ListOptions, filters url.Values) ([]*invoice.Invoice, string, error) {
	var page []*invoice.Invoice
	for inv, err := range s.desk.List(r.Context(), o) {
		if err != nil {
			return nil, "", err
		}
		if len(page) == adminPageSize {
			next := url.Values{"after": {page[len(page)-1].ID}}
			for k, vs := range filters {
				next[k] = vs
			}
			return page, listHref(next), nil
		}
		page = append(page, inv)
	}
	return page, "", nil
}

// tabs are the list's ready-made views; the one whose query is the
// current filter is marked.
func tabs(current, order string) []tab {
	q := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return listHref(v)
	}
	var need []string
	for _, x := range attention {
		need = append(need, "exception", string(x))
	}
	out := []tab{
		{Name: "All", Href: q()},
		{Name: "Open", Href: q("status", "new", "status", "processing")},
		{Name: "Needs attention", Href: q(need...)},
		{Name: "Settled", Href: q("status", "settled")},
		{Name: "Expired", Href: q("status", "expired")},
		{Name: "Cancelled", Href: q("status", "invalid")},
	}
	for i := range out {
		out[i].Current = order == "" && out[i].Href == current
	}
	return out
}

// listHref is the list with query q.
func listHref(q url.Values) string {
	if len(q) == 0 {
		return "/admin/"
	}
	return "/admin/?" + q.Encode()
}

// Decisions the admin's invoice page offers.
const (
	decideSettle = "settle"
	decideReopen = "reopen"
	decideCancel = "cancel"
)

// deadline is a choice of how long a reopened invoice waits.
type deadline struct {
	Value, Label string
	d            time.Duration
}

// reopenFor are the deadlines a reopened invoice may get.
var reopenFor = []deadline{{"30m", "30 minutes", 30 * time.Minute}, {"2h", "2 hours", 2 * time.Hour}, {"24h", "24 hours", 24 * time.Hour}}

// adminInvoiceView is what the invoice page shows.
type adminInvoiceView struct {
	Inv       *invoice.Invoice
	Order     *order
	Events    []invoice.Event // newest first
	Token     string
	Done      string
	Problem   string
	Failed    string // the decision that failed: its form keeps Reason
	Reason    string // what the staff typed
	CanSettle bool
	CanReopen bool
	CanCancel bool
	ReopenFor []deadline
	Refunds   refundView
	// What a failed refund form held, for Refunds.
	refundForm   refundForm
	failedRefund string
	refundTxID   string
}

// decisionDone says what a decision did, after the redirect.
var decisionDone = map[string]string{
	decideSettle: "The invoice is marked as settled.",
	decideReopen: "The invoice is open again, at a fresh quote.",
	decideCancel: "The invoice is cancelled.",
}

// adminInvoice shows one invoice: its facts, payments and history, and
// the decisions its status allows.
func (s *shop) adminInvoice(w http.ResponseWriter, r *http.Request) {
	if no := s.guard.admin(r); no != nil {
		s.refuse(w, r, no)
		return
	}
	q := r.URL.Query()
	v := adminInvoiceView{Done: decisionDone[q.Get("done")], Problem: refundProblem[q.Get("problem")]}
	if v.Done == "" {
		v.Done = refundDone[q.Get("done")]
	}
	s.showInvoice(w, r, http.StatusOK, r.PathValue("id"), v)
}

// showInvoice shows invoice id with v's message and form values.
func (s *shop) showInvoice(w http.ResponseWriter, r *http.Request, status int, id string, v adminInvoiceView) {
	inv, err := s.desk.Get(r.Context(), id)
	if errors.Is(err, invoice.ErrNotFound) {
		s.problem(w, r, http.StatusNotFound, "No such invoice",
			"The link may be incomplete. Find the invoice in the list, or by its order number.")
		return
	}
	if err != nil {
		s.unavailable(w, r, "admin", err)
		return
	}
	inv = inv.AsOf(s.now())
	v.Inv, v.Order, v.Token, v.ReopenFor = inv, s.orders.byNumber(inv.OrderID), s.guard.token, reopenFor
	v.Events = slices.Clone(inv.Events)
	slices.Reverse(v.Events)
	v.CanSettle = inv.Status == invoice.StatusNew || inv.Status == invoice.StatusProcessing || inv.Status == invoice.StatusExpired
	v.CanReopen = inv.Status == invoice.StatusExpired
	v.CanCancel = inv.Status == invoice.StatusNew || inv.Status == invoice.StatusExpired
	v.Refunds = s.refundsOf(inv, v.refundForm)
	if v.failedRefund != "" {
		v.Refunds.Failed, v.Refunds.TxID, v.Refunds.Reason = v.failedRefund, v.refundTxID, v.Reason
	}
	title := "Invoice"
	if inv.OrderID != "" {
		title = "Order " + inv.OrderID
	}
	s.render(w, r, status, "admin_invoice.html", title, v)
}

// adminDecide carries out a decision on an invoice: settle it by hand,
// reopen it, or cancel it.
func (s *shop) adminDecide(w http.ResponseWriter, r *http.Request) {
	if no := s.guard.admin(r); no != nil {
		s.refuse(w, r, no)
		return
	}
	if no := s.guard.form(w, r); no != nil {
		s.refuse(w, r, no)
		return
	}
	id, action := r.PathValue("id"), r.PathValue("action")
	reason := oneLine(r.PostForm.Get("reason"))
	fail := func(status int, msg string) {
		s.showInvoice(w, r, status, id, adminInvoiceView{Problem: msg, Failed: action, Reason: reason})
	}
	if len(reason) > invoice.MaxReasonLen {
		fail(http.StatusUnprocessableEntity, fmt.Sprintf("The reason is too long: please keep it under %d characters.", invoice.MaxReasonLen))
		return
	}
	if isRefundAction(action) {
		s.adminRefund(w, r, id, action, reason)
		return
	}
	var err error
	switch action {
	case decideSettle:
		if reason == "" {
			fail(http.StatusUnprocessableEntity, "Say why you accept this invoice as paid: the reason goes in its history, for the books.")
			return
		}
		_, err = s.desk.MarkSettled(r.Context(), id, reason)
	case decideReopen:
		i := slices.IndexFunc(reopenFor, func(f deadline) bool { return f.Value == r.PostForm.Get("expires") })
		if i < 0 {
			fail(http.StatusUnprocessableEntity, "Choose how long the customer has to pay.")
			return
		}
		_, err = s.desk.Reopen(r.Context(), id, &invoice.ReopenOptions{ExpiresIn: reopenFor[i].d, Reason: reason})
	case decideCancel:
		_, err = s.desk.Invalidate(r.Context(), id, reason)
	default:
		s.problem(w, r, http.StatusNotFound, "This page does not exist",
			"The admin can settle, reopen, cancel or refund an invoice.")
		return
	}
	switch {
	case err == nil, errors.Is(err, invoice.ErrNotNotified):
		// Stored; a change the shop's onChange has not taken yet is
		// offered to it again by Tick.
		http.Redirect(w, r, "/admin/invoices/"+url.PathEscape(id)+"?done="+action, http.StatusSeeOther)
	case errors.Is(err, invoice.ErrNotFound):
		fail(http.StatusNotFound, "")
	case errors.Is(err, invoice.ErrWrongStatus):
		fail(http.StatusConflict, "Its status does not allow this any more: the invoice changed meanwhile. Nothing was done.")
	case errors.Is(err, invoice.ErrOrderOpen):
		fail(http.StatusConflict, "The order has another open invoice: cancel that one first, or let it run. Nothing was done.")
	case errors.Is(err, invoice.ErrInvalidOptions):
		fail(http.StatusUnprocessableEntity, "The reason cannot be used: write it as plain text. Nothing was done.")
	default:
		s.logger().ErrorContext(r.Context(), "admin: decision failed", "invoice", id, "decision", action, "error", err)
		fail(http.StatusServiceUnavailable, "This could not be done now: the payment service (a reopened invoice needs today's price) or the shop's store did not answer. Reload the invoice to see where it stands, and try again in a moment.")
	}
}

// oneLine is a reason as the invoice keeps it: one line of text, its
// spaces and control characters (a pasted line break) made single spaces,
// without the marks that turn the direction of text (which could make
// the history read otherwise than it was written).
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Bidi_Control, r) {
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
}
