package cryptapitest

// Sizes reports how many entries the server's internal tables hold, for
// tests of the history limit and of the delivery queue.
func (s *Server) Sizes() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := 0
	for _, x := range s.setups {
		st += len(x.payments)
	}
	return map[string]int{
		"queue": len(s.queue), "groups": len(s.groups), "txs": len(s.txs),
		"ignored": len(s.ignored), "setups": len(s.setups), "byAddress": len(s.byAddress),
		"setupPayments": st, "payments": len(s.payments), "deliveries": len(s.deliveries),
		"requests": len(s.requests), "checkouts": len(s.checkouts),
	}
}
