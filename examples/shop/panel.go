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

// panelGuard keeps the developer panel, which moves money on the fake,
// to the developer's own browser on this machine:
//
//   - it answers only requests whose Host is a loopback name of the
//     address the shop serves (localhost or a loopback IP, and its port).
//     A page that rebinds its own DNS name to 127.0.0.1 is same-origin to
//     the browser, but sends its name as the Host, so it can neither read
//     the panel nor press its buttons;
//   - an action must carry the token of the panel's form, a secret of
//     this run of the shop. A page of another site cannot read it, so a
//     browser that sends no fetch metadata is safe too;
//   - an action whose Origin or Sec-Fetch-Site names another origin is
//     refused, and so is any body but the form's own encoding.
type panelGuard struct {
	port  string // the port the shop serves
	token string
}

func newPanelGuard(publicURL string) (*panelGuard, error) {
	u, err := url.Parse(publicURL)
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
	return &panelGuard{port: port, token: rand.Text()}, nil
}

// hostOK reports whether host, a Host header, names the shop's address
// by a loopback name.
func (g *panelGuard) hostOK(host string) bool {
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

// page refuses a request for the panel's page from another host; it
// answers the refusal itself.
func (g *panelGuard) page(w http.ResponseWriter, r *http.Request) bool {
	if !g.hostOK(r.Host) {
		http.Error(w, "The developer panel answers only at the shop's loopback address.", http.StatusForbidden)
		return false
	}
	return true
}

// action refuses a panel action that is not the panel's own form; it
// answers the refusal itself.
func (g *panelGuard) action(w http.ResponseWriter, r *http.Request) bool {
	if !g.page(w, r) {
		return false
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		http.Error(w, "Cross-site request refused.", http.StatusForbidden)
		return false
	}
	if origins := r.Header.Values("Origin"); len(origins) > 0 &&
		(len(origins) > 1 || !strings.EqualFold(origins[0], "http://"+r.Host) || !isASCII(origins[0])) {
		http.Error(w, "Cross-origin request refused.", http.StatusForbidden)
		return false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
		http.Error(w, "The panel takes its own form only.", http.StatusUnsupportedMediaType)
		return false
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "Malformed form.", http.StatusBadRequest)
		return false
	}
	if sent := r.PostForm["token"]; len(sent) != 1 || subtle.ConstantTimeCompare([]byte(sent[0]), []byte(g.token)) != 1 {
		http.Error(w, "This form is not the panel's, or is from an earlier run of the shop: reload the panel.", http.StatusForbidden)
		return false
	}
	return true
}
