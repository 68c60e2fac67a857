package main

import (
	"crypto/rand"
	"crypto/subtle"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// guard keeps the staff's pages, the admin (which settles, reopens and
// cancels invoices) and the developer panel (which moves money on the
// fake), to the staff's own browser on this machine:
//
//   - they answer only requests whose Host is a loopback name of the
//     address the shop listens on (localhost or a loopback IP, and its
//     port). A page that rebinds its own DNS name to 127.0.0.1 is
//     same-origin to the browser, but sends its name as the Host, so it
//     can neither read these pages nor press their buttons; and a tunnel
//     that makes the shop public sends the public name;
//   - the admin also needs its sign-in cookie, set by the sign-in link
//     the shop prints when it starts (its key is a secret of this run), in
//     case a tunnel rewrites the Host to the loopback address;
//   - a form must carry the token of the page it is on, a secret of this
//     run. A page of another site cannot read it, so a browser that sends
//     no fetch metadata is safe too;
//   - a form whose Origin or Sec-Fetch-Site names another origin is
//     refused, and so is any body but a form's own encoding.
type guard struct {
	port  string // the port the shop listens on
	token string // the forms'
	key   string // the admin's sign-in key
}

// cookie is the name of the cookie that holds the admin's sign-in key in
// the browser. Cookies do not tell ports apart: each shop's has its own
// name, so that two shops on one machine do not sign each other out.
func (g *guard) cookie() string { return "shop_admin_" + g.port }

func newGuard(localURL string) (*guard, error) {
	u, err := url.Parse(localURL)
	if err != nil {
		return nil, err
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return &guard{port: port, token: rand.Text(), key: rand.Text()}, nil
}

// refusal is why the guard turned a request away, for the person who
// sent it.
type refusal struct {
	status         int
	title, message string
}

// hostOK reports whether host, a Host header, names the shop's address
// by a loopback name.
func (g *guard) hostOK(host string) bool {
	name, port, err := net.SplitHostPort(host)
	if err != nil {
		name, port = host, "80"
	}
	if port != g.port {
		return false
	}
	if strings.EqualFold(name, "localhost") && isASCII(name) {
		return true
	}
	ip, err := netip.ParseAddr(name)
	return err == nil && ip.Zone() == "" && ip.Unmap().IsLoopback()
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// loginPath is the admin's sign-in link, relative to the shop.
func (g *guard) loginPath() string { return "/admin/login?key=" + g.key }

// same compares a secret in constant time.
func same(sent, secret string) bool {
	return subtle.ConstantTimeCompare([]byte(sent), []byte(secret)) == 1
}

// page refuses a request for the panel from another host.
func (g *guard) page(r *http.Request) *refusal {
	if !g.hostOK(r.Host) {
		return &refusal{http.StatusForbidden, "Not available at this address",
			"The shop's staff pages answer only at the shop's loopback address, on this machine."}
	}
	return nil
}

// admin refuses a request for the admin from another host, or from a
// browser that has not signed in.
func (g *guard) admin(r *http.Request) *refusal {
	if no := g.page(r); no != nil {
		return no
	}
	if ck, err := r.Cookie(g.cookie()); err != nil || !same(ck.Value, g.key) {
		return &refusal{http.StatusForbidden, "Please sign in",
			"The admin is for the shop's staff. Open the admin link the shop printed when it started."}
	}
	return nil
}

// form refuses a post that is not a form of the staff's own pages, and
// parses the form of one that is.
func (g *guard) form(w http.ResponseWriter, r *http.Request) *refusal {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return &refusal{http.StatusForbidden, "Cross-site request refused",
			"This form came from another site. Use the buttons of the shop's own pages."}
	}
	if origins := r.Header.Values("Origin"); len(origins) > 0 &&
		(len(origins) > 1 || !strings.EqualFold(origins[0], "http://"+r.Host) || !isASCII(origins[0])) {
		return &refusal{http.StatusForbidden, "Cross-origin request refused",
			"This form came from another site. Use the buttons of the shop's own pages."}
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		return &refusal{http.StatusUnsupportedMediaType, "Not a form of this page",
			"The staff pages take their own forms only."}
	}
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10) // a reason of MaxReasonLen bytes, each escaped
	if err := r.ParseForm(); err != nil {
		return &refusal{http.StatusBadRequest, "This form could not be read",
			"Go back, reload the page and try again."}
	}
	if sent := r.PostForm["token"]; len(sent) != 1 || !same(sent[0], g.token) {
		return &refusal{http.StatusForbidden, "This form has expired",
			"It is not this page's, or it is from an earlier run of the shop: reload the page and try again."}
	}
	return nil
}

// refuse shows a refusal.
func (s *shop) refuse(w http.ResponseWriter, r *http.Request, no *refusal) {
	s.problem(w, r, no.status, no.title, no.message)
}
