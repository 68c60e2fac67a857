package callback

import (
	"context"
	"errors"
	cryptapi "github.com/forwardpay/cryptapi-go"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scriptedStore answers Claim from a table and can fail on demand.
type scriptedStore struct {
	claims      map[string]Outcome
	claimErr    error
	completeErr error
	releaseErr  error
	completed   []string
	released    []string
}

func (s *scriptedStore) Claim(_ context.Context, key string, _ time.Duration) (Outcome, error) {
	if s.claimErr != nil {
		return 0, s.claimErr
	}
	if c, ok := s.claims[key]; ok {
		return c, nil
	}
	return Claimed, nil
}

func (s *scriptedStore) Complete(_ context.Context, key string) error {
	s.completed = append(s.completed, key)
	return s.completeErr
}

func (s *scriptedStore) Release(_ context.Context, key string) error {
	s.released = append(s.released, key)
	return s.releaseErr
}

func TestProcessTable(t *testing.T) {
	errFn := errors.New("order system down")
	errStore := errors.New("db down")
	confirmed := &Payment{UUID: "u", AddressIn: "a"}
	pending := &Payment{UUID: "u", AddressIn: "a", Pending: true}
	tests := []struct {
		name      string
		p         *Payment
		store     *scriptedStore
		fnErr     error
		want      Outcome
		wantErr   error
		calls     int
		completed []string
		released  []string
	}{
		{"confirmed new", confirmed, &scriptedStore{}, nil, Processed, nil, 1, []string{"u:confirmed"}, nil},
		{"confirmed done", confirmed, &scriptedStore{claims: map[string]Outcome{"u:confirmed": AlreadyDone}}, nil, AlreadyDone, nil, 0, nil, nil},
		{"confirmed busy", confirmed, &scriptedStore{claims: map[string]Outcome{"u:confirmed": Busy}}, nil, Busy, nil, 0, nil, nil},
		{"confirmed fn fails", confirmed, &scriptedStore{}, errFn, Failed, errFn, 1, nil, []string{"u:confirmed"}},
		{"confirmed claim error", confirmed, &scriptedStore{claimErr: errStore}, nil, Failed, errStore, 0, nil, nil},
		{"confirmed unknown claim", confirmed, &scriptedStore{claims: map[string]Outcome{"u:confirmed": Outcome(42)}}, nil, Failed, nil, 0, nil, nil},
		{"confirmed complete fails", confirmed, &scriptedStore{completeErr: errStore}, nil, Failed, ErrNotRecorded, 1, []string{"u:confirmed"}, nil},
		{"pending new", pending, &scriptedStore{}, nil, Processed, nil, 1, []string{"u:pending"}, []string{"u:confirmed"}},
		{"pending done", pending, &scriptedStore{claims: map[string]Outcome{"u:pending": AlreadyDone}}, nil, AlreadyDone, nil, 0, nil, nil},
		{"pending busy", pending, &scriptedStore{claims: map[string]Outcome{"u:pending": Busy}}, nil, Busy, nil, 0, nil, nil},
		{"pending after confirmed", pending, &scriptedStore{claims: map[string]Outcome{"u:confirmed": AlreadyDone}}, nil, Superseded, nil, 0, []string{"u:pending"}, nil},
		{"pending while confirming", pending, &scriptedStore{claims: map[string]Outcome{"u:confirmed": Busy}}, nil, Busy, nil, 0, nil, []string{"u:pending"}},
		{"pending unknown twin claim", pending, &scriptedStore{claims: map[string]Outcome{"u:confirmed": Outcome(9)}}, nil, Failed, nil, 0, nil, []string{"u:pending"}},
		{"pending fn fails", pending, &scriptedStore{}, errFn, Failed, errFn, 1, nil, []string{"u:pending", "u:confirmed"}},
		{"pending release fails", pending, &scriptedStore{releaseErr: errStore}, nil, Processed, errStore, 1, []string{"u:pending"}, []string{"u:confirmed"}},
		{"no key", &Payment{AddressIn: "a"}, &scriptedStore{}, nil, Failed, ErrNoPaymentKey, 0, nil, nil},
		{"nil payment", nil, &scriptedStore{}, nil, Failed, ErrNoPaymentKey, 0, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			fn := func(ctx context.Context, p *Payment) error {
				calls++
				assert.NoError(t, ctx.Err(), "fn's context lasts while the claim is held")
				return tt.fnErr
			}
			o, err := quickProcess(context.Background(), tt.store, 0, fn, tt.p)
			assert.Equal(t, tt.want, o, o.String())
			switch {
			case tt.wantErr != nil:
				assert.ErrorIs(t, err, tt.wantErr)
			case tt.want == Failed:
				assert.Error(t, err)
			default:
				assert.NoError(t, err)
			}
			assert.Equal(t, tt.calls, calls)
			// A failing call is tried again: compare the keys acted on.
			assert.Equal(t, tt.completed, slices.Compact(tt.store.completed))
			assert.Equal(t, tt.released, slices.Compact(tt.store.released))
		})
	}
}

// quickProcess is Process on the real clock without waits between tries.
func quickProcess(ctx context.Context, s Store, lease time.Duration, fn func(context.Context, *Payment) error, p *Payment) (Outcome, error) {
	pr := newProcessor(s, lease, realClock{})
	pr.backoff = 0
	return pr.process(ctx, fn, p)
}

func TestProcessNeedsStoreAndFunc(t *testing.T) {
	p := &Payment{UUID: "u"}
	o, err := Process(context.Background(), nil, 0, func(context.Context, *Payment) error { return nil }, p)
	assert.Equal(t, Failed, o)
	assert.ErrorIs(t, err, cryptapi.ErrInvalidOption)
	o, err = Process(context.Background(), NewMemoryStore(), 0, nil, p)
	assert.Equal(t, Failed, o)
	assert.ErrorIs(t, err, cryptapi.ErrInvalidOption)
}

func TestProcessPanicReleasesKeys(t *testing.T) {
	s := NewMemoryStore()
	ctx := context.Background()
	p := &Payment{UUID: "u", Pending: true}
	assert.PanicsWithValue(t, "boom", func() {
		_, _ = Process(ctx, s, time.Minute, func(context.Context, *Payment) error { panic("boom") }, p)
	})
	// Both keys are free again: the redelivery is processed.
	calls := 0
	o, err := Process(ctx, s, time.Minute, func(context.Context, *Payment) error { calls++; return nil }, p)
	require.NoError(t, err)
	assert.Equal(t, Processed, o)
	assert.Equal(t, 1, calls)
}

func TestProcessCancelledRequestStillReleases(t *testing.T) {
	s := NewMemoryStore()
	ctx, cancel := context.WithCancel(context.Background())
	p := &Payment{UUID: "u"}
	o, err := Process(ctx, s, time.Minute, func(context.Context, *Payment) error {
		cancel() // the service hung up while fn ran
		return context.Canceled
	}, p)
	assert.Equal(t, Failed, o)
	assert.ErrorIs(t, err, context.Canceled)
	c, err := s.Claim(context.Background(), "u:confirmed", time.Minute)
	require.NoError(t, err)
	assert.Equal(t, Claimed, c, "the key was released despite the cancelled context")
}

func TestOutcome(t *testing.T) {
	for o, ack := range map[Outcome]bool{Processed: true, AlreadyDone: true, Superseded: true, Busy: false, Failed: false, Outcome(0): false} {
		assert.Equal(t, ack, o.Acknowledge(), o.String())
	}
	assert.Equal(t, "unknown", Outcome(0).String())
	assert.Equal(t, "superseded", Superseded.String())
}
