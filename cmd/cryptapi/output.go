package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"net/url"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/shopspring/decimal"
)

// ---- secrets ----

// redactor knows the secrets (the API key) that must never be printed.
type redactor struct {
	mu      sync.Mutex
	secrets []string
}

// add registers s, raw and in its URL-escaped forms.
func (r *redactor) add(s string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
		dup := false
		for _, have := range r.secrets {
			dup = dup || have == v
		}
		if !dup {
			r.secrets = append(r.secrets, v)
		}
	}
}

// redact replaces every registered secret in s.
func (r *redactor) redact(s string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.secrets {
		s = strings.ReplaceAll(s, v, "REDACTED")
	}
	return s
}

// redactingWriter removes secrets from each write. Every writer of this
// tool writes whole lines or whole tables, so a secret is never split
// between two writes.
type redactingWriter struct {
	mu sync.Mutex
	w  io.Writer
	r  *redactor
}

func (w *redactingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := io.WriteString(w.w, w.r.redact(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// secretFlag is the -api-key flag. Its value is registered with the
// redactor as soon as it is set, and String never shows it, so neither -h
// nor a flag error can print it.
type secretFlag struct {
	val *string
	r   *redactor
}

func (f *secretFlag) String() string { return "" }

func (f *secretFlag) Set(s string) error {
	if f.r != nil {
		f.r.add(s)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return errors.New("empty API key")
	}
	*f.val = s
	return nil
}

// ---- flag types ----

// decimalFlag is an amount flag parsed exactly with decimal.NewFromString.
type decimalFlag struct {
	d   decimal.Decimal
	set bool
}

func (f *decimalFlag) String() string {
	if f == nil || !f.set {
		return ""
	}
	return f.d.String()
}

func (f *decimalFlag) Set(s string) error {
	d, err := parseAmount(s)
	if err != nil {
		return err
	}
	f.d, f.set = d, true
	return nil
}

// parseAmount reads a decimal number such as 0.015 or 1e-3.
func parseAmount(s string) (decimal.Decimal, error) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 || strings.ContainsAny(s, " _,") {
		return decimal.Decimal{}, errors.New("not a decimal number")
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, errors.New("not a decimal number")
	}
	return d, nil
}

// positive returns the amount of flag name, which must be set and above
// zero.
func (f *decimalFlag) positive(name string) (decimal.Decimal, error) {
	if !f.set {
		return decimal.Decimal{}, usagef("-%s is required", name)
	}
	if !f.d.IsPositive() {
		return decimal.Decimal{}, usagef("-%s must be a positive amount", name)
	}
	return f.d, nil
}

// listFlag collects a repeated flag.
type listFlag []string

func (f *listFlag) String() string {
	if f == nil {
		return ""
	}
	return strings.Join(*f, ", ")
}

func (f *listFlag) Set(s string) error {
	*f = append(*f, s)
	return nil
}

// required returns a usage error naming the first empty flag.
func required(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if strings.TrimSpace(pairs[i+1]) == "" {
			return usagef("-%s is required", pairs[i])
		}
	}
	return nil
}

// ---- output ----

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// table renders rows as aligned columns, in one write.
type table struct {
	b  bytes.Buffer
	tw *tabwriter.Writer
}

func newTable() *table {
	t := &table{}
	t.tw = tabwriter.NewWriter(&t.b, 0, 4, 2, ' ', 0)
	return t
}

// row adds one line; cells are cleaned of tabs and control characters.
func (t *table) row(cells ...string) {
	for i, c := range cells {
		if i > 0 {
			_, _ = t.tw.Write([]byte{'\t'})
		}
		_, _ = t.tw.Write([]byte(cell(c)))
	}
	_, _ = t.tw.Write([]byte{'\n'})
}

// kv adds a label and value, skipping empty values.
func (t *table) kv(label, value string) {
	if value == "" {
		return
	}
	t.row(label, value)
}

// flush writes the table to w.
func (t *table) flush(w io.Writer) error {
	if err := t.tw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(t.b.Bytes())
	return err
}

// cell makes text from the service safe for a terminal table: control
// characters (escape sequences, tabs, line breaks) become "?"; an empty
// cell becomes "-".
func cell(s string) string {
	if s == "" {
		return "-"
	}
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
}

// decOpt prints an amount; zero prints as "" so that kv skips it.
func decOpt(d decimal.Decimal) string {
	if d.IsZero() {
		return ""
	}
	return d.String()
}

// timeText prints a time in UTC, or "" for the zero time.
func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// aliasMark starts the usage text of an old flag name kept for one
// release: it is accepted but -h does not list it.
const aliasMark = "\x00"

// alias registers old as another name of the flag name.
func alias(fs *flag.FlagSet, old, name string) {
	fs.Var(fs.Lookup(name).Value, old, aliasMark+"old name of -"+name)
}

// isAlias reports whether f is an old name registered by alias.
func isAlias(f *flag.Flag) bool { return strings.HasPrefix(f.Usage, aliasMark) }
