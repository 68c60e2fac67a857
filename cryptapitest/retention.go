package cryptapitest

import "errors"

// WithHistoryLimit bounds what the server remembers, so that a
// long-running server (such as "cryptapi sim serve") keeps a bounded
// amount of memory however many payments it sees. The server keeps the n
// most recent of each of:
//   - delivery attempts (Deliveries) and answered requests (Requests);
//   - accepted payments (Payments, and the callbacks of the logs); an
//     older payment is forgotten: Confirm answers ErrUnknownTx for it, and
//     its queued deliveries still run;
//   - payments ignored below the minimum (Confirm answers ErrUnknownTx
//     for an older one);
//   - addresses, in the order they were created: the logs of an older
//     address answer that there are none, Pay answers ErrUnknownAddress,
//     and creating it again makes a new address;
//   - hosted checkout and deposit pages: an older one is not found.
//
// Payouts are all kept (they are not made per payment). Queued
// deliveries are never dropped: they end when acknowledged or
// when the retry schedule runs out. Without this option (or with n = 0)
// the server keeps everything, which is what tests usually want. A
// negative n is an error.
func WithHistoryLimit(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.errs = append(c.errs, errors.New("WithHistoryLimit: negative limit"))
			return
		}
		c.history = n
	}
}

// trimFront drops the oldest elements of xs beyond the most recent limit
// (no limit when limit is 0), clearing them so that they can be
// collected. The backing array is replaced by append when it fills, so
// memory stays proportional to limit.
func trimFront[T any](xs []T, limit int) []T {
	if limit <= 0 || len(xs) <= limit {
		return xs
	}
	k := len(xs) - limit
	clear(xs[:k])
	return xs[k:]
}

// trimPaymentsLocked forgets the oldest payments beyond the limit.
func (s *Server) trimPaymentsLocked() {
	if s.history <= 0 {
		return
	}
	for len(s.payments) > s.history {
		p := s.payments[0]
		s.payments[0] = nil
		s.payments = s.payments[1:]
		if s.txs[p.txidIn] == p {
			delete(s.txs, p.txidIn)
		}
		st := p.setup
		for i, o := range st.payments {
			if o == p {
				// Almost always the first: payments are added in order.
				copy(st.payments[i:], st.payments[i+1:])
				st.payments[len(st.payments)-1] = nil
				st.payments = st.payments[:len(st.payments)-1]
				break
			}
		}
	}
}

// trimIgnoredLocked forgets the oldest ignored payments beyond the limit.
func (s *Server) trimIgnoredLocked() {
	if s.history <= 0 {
		return
	}
	for len(s.ignoredOrder) > s.history {
		delete(s.ignored, s.ignoredOrder[0])
		s.ignoredOrder = trimFront(s.ignoredOrder, len(s.ignoredOrder)-1)
	}
}

// trimSetupsLocked forgets the oldest addresses beyond the limit.
func (s *Server) trimSetupsLocked() {
	if s.history <= 0 {
		return
	}
	for len(s.setupOrder) > s.history {
		st := s.setupOrder[0]
		s.setupOrder = trimFront(s.setupOrder, len(s.setupOrder)-1)
		if k := st.tickerKey + "\x00" + st.callback; s.setups[k] == st {
			delete(s.setups, k)
		}
		if k := st.tickerKey + "\x00" + st.addressIn; s.byAddress[k] == st {
			delete(s.byAddress, k)
		}
	}
}

// trimCheckoutsLocked forgets the oldest hosted pages beyond the limit.
func (s *Server) trimCheckoutsLocked() {
	if s.history <= 0 {
		return
	}
	for len(s.checkoutOrder) > s.history {
		delete(s.checkouts, s.checkoutOrder[0])
		s.checkoutOrder = trimFront(s.checkoutOrder, len(s.checkoutOrder)-1)
	}
}
