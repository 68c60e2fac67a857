package cryptapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jarcoal/httpmock"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCoinsKeptForTheTTL: Coins reads the list once per TTL, with and
// without prices apart; what a caller does to the list it got does not
// reach the next caller; a TTL of 0 reads it on every call.
func TestCoinsKeptForTheTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, api := setup(t, WithInfoCacheTTL(time.Minute))
		api.handle("GET /info/", serveFixture(t, "info_all.json"))
		ctx := context.Background()

		first, err := c.Coins(ctx, nil)
		require.NoError(t, err)
		require.Contains(t, first, "btc")
		usd := first["btc"].Prices["USD"]
		// The caller's list is its own.
		first["btc"].Prices["USD"] = decimal.NewFromInt(1)
		first["btc"].Coin = "changed"
		delete(first, "bch")

		time.Sleep(59 * time.Second)
		again, err := c.Coins(ctx, nil)
		require.NoError(t, err)
		assert.Equal(t, 1, api.count(), "a second call within the TTL sends nothing")
		assert.Equal(t, "Bitcoin", again["btc"].Coin)
		assert.True(t, usd.Equal(again["btc"].Prices["USD"]), "got %v", again["btc"].Prices["USD"])
		assert.Contains(t, again, "bch")
		assert.Len(t, again, allCoinsRecords())

		_, err = c.Coins(ctx, &InfoOptions{NoPrices: true})
		require.NoError(t, err)
		assert.Equal(t, 2, api.count(), "the list without prices is another list")
		assert.Equal(t, "0", api.last().Query.Get("prices"))

		time.Sleep(time.Second)
		_, err = c.Coins(ctx, nil)
		require.NoError(t, err)
		assert.Equal(t, 3, api.count(), "an expired list is read again")
		assert.False(t, api.last().Query.Has("prices"))
	})

	c, api := setup(t, WithInfoCacheTTL(0))
	api.handle("GET /info/", serveFixture(t, "info_all.json"))
	for range 3 {
		_, err := c.Coins(context.Background(), nil)
		require.NoError(t, err)
	}
	assert.Equal(t, 3, api.count(), "TTL 0 reads the list on every call")
}

// TestCoinsErrorIsNotKept: a failed read is not kept; the next call
// sends a request.
func TestCoinsErrorIsNotKept(t *testing.T) {
	c, api := setup(t, WithoutRetries())
	fail := true
	api.handle("GET /info/", func(r *http.Request) (*http.Response, error) {
		if fail {
			return httpmock.NewStringResponse(http.StatusServiceUnavailable, `{"status":"error","error":"busy"}`), nil
		}
		return serveFixture(t, "info_all.json")(r)
	})
	_, err := c.Coins(context.Background(), nil)
	var ae *APIError
	require.ErrorAs(t, err, &ae)
	fail = false
	coins, err := c.Coins(context.Background(), nil)
	require.NoError(t, err)
	assert.Len(t, coins, allCoinsRecords())
	assert.Equal(t, 2, api.count())
}

// gate holds the answers of the mock until it is opened; a request whose
// context ends first fails with the context's error.
type gate struct {
	open    chan struct{}
	fixture []byte
}

func newGate(t *testing.T) *gate {
	return &gate{open: make(chan struct{}), fixture: fixture(t, "info_all.json")}
}

func (g *gate) respond(r *http.Request) (*http.Response, error) {
	select {
	case <-g.open:
		return serveBody(http.StatusOK, "application/json", g.fixture)(r)
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
}

// TestCoinsConcurrentCallersShareOneRequest: callers that find no list
// while one is being read wait for that request; each gets a list of its
// own.
func TestCoinsConcurrentCallersShareOneRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, api := setup(t)
		g := newGate(t)
		api.handle("GET /info/", g.respond)
		const callers = 8
		got := make([]Coins, callers)
		errs := make([]error, callers)
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() { got[i], errs[i] = c.Coins(context.Background(), nil) })
		}
		synctest.Wait() // every caller is waiting: one for the answer, the others for it
		assert.Equal(t, 1, api.count(), "one request for all the callers")
		close(g.open)
		wg.Wait()
		for i := range callers {
			require.NoError(t, errs[i])
			assert.Len(t, got[i], allCoinsRecords())
			for j := range i {
				assert.NotSame(t, got[i]["btc"], got[j]["btc"], "each caller has records of its own")
			}
		}
		assert.Equal(t, 1, api.count())
	})
}

// TestCoinsWaiterOutlivesTheSender: when the caller that sent the request
// gives up, a waiter whose context lives sends its own and gets the
// list; a waiter whose own context ends stops waiting at once, and the
// request goes on for the others.
func TestCoinsWaiterOutlivesTheSender(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, api := setup(t, WithoutRetries())
		g := newGate(t)
		api.handle("GET /info/", g.respond)

		senderCtx, cancelSender := context.WithCancel(context.Background())
		var senderErr error
		sent := make(chan struct{})
		go func() {
			defer close(sent)
			_, senderErr = c.Coins(senderCtx, nil)
		}()
		synctest.Wait()
		require.Equal(t, 1, api.count())

		var waiterGot Coins
		var waiterErr error
		waited := make(chan struct{})
		go func() {
			defer close(waited)
			waiterGot, waiterErr = c.Coins(context.Background(), nil)
		}()
		impatientCtx, cancelImpatient := context.WithCancel(context.Background())
		var impatientErr error
		gaveUp := make(chan struct{})
		go func() {
			defer close(gaveUp)
			_, impatientErr = c.Coins(impatientCtx, nil)
		}()
		synctest.Wait()
		assert.Equal(t, 1, api.count(), "the waiters wait")

		cancelImpatient()
		<-gaveUp
		assert.ErrorIs(t, impatientErr, context.Canceled)

		cancelSender()
		<-sent
		assert.ErrorIs(t, senderErr, context.Canceled)
		synctest.Wait()
		assert.Equal(t, 2, api.count(), "the waiter sent a request of its own")

		close(g.open)
		<-waited
		require.NoError(t, waiterErr)
		assert.Len(t, waiterGot, allCoinsRecords())

		_, err := c.Coins(context.Background(), nil)
		require.NoError(t, err)
		assert.Equal(t, 2, api.count(), "the waiter's list is kept")
	})
}

// TestCachedReadPanics: a read that panics leaves no list and no request
// under way behind it: its waiters get an error, the next call reads.
func TestCachedReadPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, err := New()
		require.NoError(t, err)
		release := make(chan struct{})
		var waiterErr error
		var wg sync.WaitGroup
		wg.Go(func() {
			defer func() { assert.NotNil(t, recover()) }()
			_, _ = cachedRead(context.Background(), c, "test", "k", func(context.Context) (int, error) {
				<-release
				panic("boom")
			})
		})
		synctest.Wait()
		wg.Go(func() {
			_, waiterErr = cachedRead(context.Background(), c, "test", "k", func(context.Context) (int, error) {
				return 0, errors.New("the waiter must not read")
			})
		})
		synctest.Wait()
		close(release)
		wg.Wait()
		require.Error(t, waiterErr)
		assert.Contains(t, waiterErr.Error(), "panicked")
		n, err := cachedRead(context.Background(), c, "test", "k", func(context.Context) (int, error) { return 7, nil })
		require.NoError(t, err)
		assert.Equal(t, 7, n)
	})
}

// TestCoinsKeptPerClient: a client keeps only its own answers, those of
// its base URL and its API key; another client's list is never served.
func TestCoinsKeptPerClient(t *testing.T) {
	var mu sync.Mutex
	requests := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who := r.URL.Path + " key=" + r.URL.Query().Get("apikey")
		mu.Lock()
		requests[who]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"btc": {"coin": %q, "minimum_transaction_coin": "0.0001"}}`, who)
	}))
	t.Cleanup(srv.Close)
	clients := map[string]*Client{}
	for name, opts := range map[string][]Option{
		"/a/info/ key=":   {WithBaseURL(srv.URL + "/a")},
		"/b/info/ key=":   {WithBaseURL(srv.URL + "/b")},
		"/a/info/ key=k1": {WithBaseURL(srv.URL + "/a"), WithAPIKey("k1")},
		"/a/info/ key=k2": {WithBaseURL(srv.URL + "/a"), WithAPIKey("k2")},
	} {
		c, err := New(opts...)
		require.NoError(t, err)
		clients[name] = c
	}
	for round := range 2 {
		for name, c := range clients {
			coins, err := c.Coins(context.Background(), nil)
			require.NoError(t, err)
			assert.Equal(t, name, coins["btc"].Coin, "round %d: the answer to this client's own request", round)
		}
	}
	for name := range clients {
		assert.Equal(t, 1, requests[name], "%s: one request, then the list kept", name)
	}
}
