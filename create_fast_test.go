package cryptapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/forwardpay/cryptapi-go/internal/callbackurl"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fast paths of CreateAddress, each checked against the plain code it
// stands for: the hand-written query encoder against go-querystring and
// url.Values.Encode, the one-buffer URL against url.URL.String, the
// bounded read against io.ReadAll(io.LimitReader), the one-pass answer
// decoder against encoding/json, and the callback comparison's shortcut
// against callbackurl.Same.

// plainCreateRequest is the request CreateAddress sends, described for
// buildURL: the options encoded by go-querystring, the callback and
// address as parameters.
func plainCreateRequest(path string, o *CreateOptions, callback, address string) *request {
	return &request{path: path, opts: o, query: createValues(callback, address)}
}

// fastCreateRequest is the same request with the hand-written encoder.
func fastCreateRequest(path string, o *CreateOptions, callback, address string) *request {
	return &request{path: path, create: createQuery{o: o, callback: callback, address: address}}
}

// checkCreateURL compares the fast URL of a create request with buildURL's.
func checkCreateURL(t *testing.T, c *Client, path string, o *CreateOptions, callback, address string) {
	t.Helper()
	plain, err := c.buildURL(plainCreateRequest(path, o, callback, address))
	require.NoError(t, err)
	fast, err := c.requestURL(fastCreateRequest(path, o, callback, address))
	require.NoError(t, err)
	if fast != plain.String() {
		t.Fatalf("fast  %q\nplain %q", fast, plain.String())
	}
	// The same text means the same parameters; check them too, in case
	// both were wrong alike.
	got, err := url.Parse(fast)
	require.NoError(t, err)
	want, err := url.ParseQuery(plain.RawQuery)
	require.NoError(t, err)
	assert.Equal(t, want, got.Query())
}

func TestCreateQueryMatchesPlain(t *testing.T) {
	keyed, err := New(WithAPIKey("k+y/=& ü"), WithBaseURL("https://proxy.example/api%20v1/"))
	require.NoError(t, err)
	keyless, err := New(WithBaseURL("http://127.0.0.1:8080"))
	require.NoError(t, err)
	all := &CreateOptions{Pending: true, Confirmations: -12, Email: "a b+c@shop.example", Post: true, JSON: true,
		Priority: "fast&x=1", MultiToken: true, MultiChain: true, Convert: true}
	for _, c := range []*Client{keyed, keyless} {
		checkCreateURL(t, c, "btc/create/", &CreateOptions{}, benchCallback, btcOut1)
		checkCreateURL(t, c, "/trc20/usdt/create/", all, "https://shop.example/cb?a=1&b=%2F~", "0.5@"+btcOut1+"|0.5@"+btcOut2)
		checkCreateURL(t, c, "btc/create/", all, "https://shop.example/cb", "")
		checkCreateURL(t, c, "a b/%2F/é/create/", all, "https://shop.example/cb", btcOut1)
	}
}

// TestCreateQueryCoversEveryField sets each field of CreateOptions
// that go-querystring encodes, one at a time, and compares the encoders:
// a tagged field added to CreateOptions but not to createQuery.write
// fails here.
func TestCreateQueryCoversEveryField(t *testing.T) {
	c, err := New(WithAPIKey(testKey))
	require.NoError(t, err)
	typ := reflect.TypeOf(CreateOptions{})
	tagged := 0
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if tag := f.Tag.Get("url"); tag == "-" || tag == "" {
			continue
		}
		tagged++
		var o CreateOptions
		v := reflect.ValueOf(&o).Elem().Field(i)
		switch v.Kind() {
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int:
			v.SetInt(7)
		case reflect.String:
			v.SetString("x y")
		default:
			t.Fatalf("field %s: kind %s has no case here", f.Name, v.Kind())
		}
		plain, err := c.buildURL(plainCreateRequest("btc/create/", &o, benchCallback, btcOut1))
		require.NoError(t, err)
		name, _, _ := strings.Cut(f.Tag.Get("url"), ",")
		require.True(t, plain.Query().Has(name), "field %s is encoded by go-querystring", f.Name)
		checkCreateURL(t, c, "btc/create/", &o, benchCallback, btcOut1)
	}
	assert.Equal(t, 9, tagged, "the fields this test was written for")
}

// FuzzCreateQueryMatchesPlain checks the hand-written create encoder and
// the one-buffer URL against go-querystring, url.Values.Encode and
// url.URL.String, byte for byte, for any options, key, base path and
// request path.
func FuzzCreateQueryMatchesPlain(f *testing.F) {
	f.Add("/api/v1", "btc/create/", testKey, benchCallback, btcOut1, "", "", 0, uint8(0))
	f.Add("", "trc20/usdt/create/", "", "https://shop.example/cb?x=%41+b", "0.3@a|0.7@b", "m@shop.example", "fast", 3, uint8(0xff))
	f.Add("/p%20q/", "a b/ü/", "k&=+", "http://[::1]:80/?", "", "é", "a+b", -1, uint8(0x55))
	f.Fuzz(func(t *testing.T, basePath, path, key, callback, address, email, priority string, conf int, flags uint8) {
		opts := []Option{WithBaseURL("https://h.example" + basePath)}
		if key != "" {
			opts = append(opts, WithAPIKey(key))
		}
		c, err := New(opts...)
		if err != nil {
			return // not a client New makes
		}
		o := &CreateOptions{
			Confirmations: conf, Email: email, Priority: priority,
			Pending: flags&1 != 0, Post: flags&2 != 0, JSON: flags&4 != 0, MultiToken: flags&8 != 0,
			MultiChain: flags&16 != 0, Convert: flags&32 != 0,
		}
		checkCreateURL(t, c, path, o, callback, address)
		var b strings.Builder
		writeQueryEscape(&b, email)
		if got, want := b.String(), url.QueryEscape(email); got != want {
			t.Fatalf("writeQueryEscape %q, url.QueryEscape %q", got, want)
		}
	})
}

// FuzzSameCallbackShortcut checks the shortcut of checkBinding: a
// callback URL that CallbackURL accepts is the same as itself for
// callbackurl.Same, so an answer repeating it byte for byte needs no
// parsing.
func FuzzSameCallbackShortcut(f *testing.F) {
	f.Add(benchCallback, "order_id", "1042")
	f.Add("https://shop.example", "", "")
	f.Add("HTTP://U:P@shop.example:80/a%2Fb/?x=%41&&y", "n", "a b&c")
	f.Add("https://shop.example/cb?tag=a&tag=b&", "tag", "c")
	f.Fuzz(func(t *testing.T, base, k, v string) {
		var params url.Values
		if k != "" {
			params = url.Values{k: {v}}
		}
		cb, err := CallbackURL(base, params)
		if err != nil {
			return
		}
		if !callbackurl.Same(cb, cb) {
			t.Fatalf("CallbackURL accepted %q, which Same does not find equal to itself", cb)
		}
	})
}

// chunkReader returns its data in reads of at most chunk bytes, the last
// one with io.EOF, and fails with errAt after failAt bytes when failAt is
// not negative and below the length of the data.
type chunkReader struct {
	data   []byte
	chunk  int
	failAt int
}

var errAt = errors.New("read failed")

func (r *chunkReader) Read(p []byte) (int, error) {
	if r.failAt == 0 {
		return 0, errAt
	}
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.chunk, len(r.data))
	if r.failAt > 0 {
		n = min(n, r.failAt)
		r.failAt -= n
	}
	copy(p, r.data[:n])
	r.data = r.data[n:]
	if len(r.data) == 0 && r.failAt < 0 {
		return n, io.EOF
	}
	return n, nil
}

// FuzzReadLimitedMatchesReadAll checks the bounded read of answers
// against io.ReadAll(io.LimitReader(r, limit+1)), which it replaces: the
// same bytes and the same error, for any body, Content-Length (true or
// not), limit, read size and failure.
func FuzzReadLimitedMatchesReadAll(f *testing.F) {
	f.Add([]byte(`{"status":"success"}`), int64(20), int64(16<<20), 512, -1)
	f.Add([]byte(`{"status":"success"}`), int64(-1), int64(5), 3, -1)
	f.Add(bytes.Repeat([]byte("x"), 3000), int64(10), int64(2999), 700, 2500)
	f.Add([]byte("abc"), int64(1<<40), int64(3), 1, 0)
	f.Fuzz(func(t *testing.T, data []byte, hint, limit int64, chunk, failAt int) {
		if limit <= 0 || limit > 1<<20 || chunk <= 0 {
			return
		}
		failAt = max(failAt, -1)
		got, gerr := readLimited(&chunkReader{data: data, chunk: chunk, failAt: failAt}, hint, limit)
		want, werr := io.ReadAll(io.LimitReader(&chunkReader{data: data, chunk: chunk, failAt: failAt}, limit+1))
		if !bytes.Equal(got, want) || gerr != werr {
			t.Fatalf("readLimited %d bytes, %v; io.ReadAll %d bytes, %v", len(got), gerr, len(want), werr)
		}
	})
}

// TestMaxResponseBytesAtMaxInt64ReadsTheAnswer: the largest limit
// WithMaxResponseBytes accepts is no limit. The read bounded by limit+1
// overflowed to a negative bound and read nothing, so every call failed
// with "empty response".
func TestMaxResponseBytesAtMaxInt64ReadsTheAnswer(t *testing.T) {
	c, api := setup(t, WithMaxResponseBytes(math.MaxInt64))
	api.handle("GET /btc/create/", serveFixture(t, "create_single.json"))
	addr, err := c.CreateAddress(t.Context(), "btc", &CreateOptions{Callback: benchCallback, Address: "1H6ZZpRmMnrw8ytepV3BYwMjYYnEkWDqVP"})
	require.NoError(t, err)
	assert.Equal(t, "3PFDLnNp7HH7FHtAmEFaJrYqcZYdG6dB4d", addr.AddressIn)
}

// TestReadBodyIsSizedFromContentLength: an answer of announced length is
// read into one buffer of that size, and a Content-Length larger than
// maxPrealloc reserves no more than the default before data arrives.
func TestReadBodyIsSizedFromContentLength(t *testing.T) {
	body := bytes.Repeat([]byte("a"), 5000)
	got, err := readLimited(bytes.NewReader(body), int64(len(body)), 1<<20)
	require.NoError(t, err)
	assert.Equal(t, body, got)
	assert.Equal(t, len(body)+1, cap(got), "one buffer of the announced length, plus one byte to see the end")

	got, err = readLimited(bytes.NewReader([]byte("ab")), 1<<40, 16<<20)
	require.NoError(t, err)
	assert.Equal(t, "ab", string(got))
	assert.Equal(t, 512, cap(got), "a huge Content-Length reserves nothing extra")
}

// plainAddress decodes a create answer with encoding/json only.
func plainAddress(b []byte) (Address, error) {
	var w addressWire
	if err := json.Unmarshal(b, &w); err != nil {
		return Address{}, err
	}
	var a Address
	a.fromWire(&w)
	return a, nil
}

// TestAddressFastPathTakesTheServiceAnswers: the one-pass decoder takes
// the single-destination answers. An address_out holding the text of a
// map has escaped quotes, which it leaves to encoding/json.
func TestAddressFastPathTakesTheServiceAnswers(t *testing.T) {
	var w addressWire
	assert.False(t, fastAddressWire(bytes.TrimSpace(fixture(t, "create_multi.json")), &w), "escapes go to encoding/json")
	for _, name := range []string{"create_single.json", "create_trc20_usdt.json"} {
		b := bytes.TrimSpace(fixture(t, name))
		var w addressWire
		require.True(t, fastAddressWire(b, &w), name)
		var fast Address
		fast.fromWire(&w)
		plain, err := plainAddress(b)
		require.NoError(t, err)
		assert.Equal(t, plain, fast, name)
		assert.NotEmpty(t, fast.AddressIn, name)
	}
}

// FuzzAddressFastMatchesPlain checks the one-pass decoding of the create
// answer against encoding/json: whenever fastAddressWire accepts an
// input, encoding/json accepts it too and gives the same Address.
func FuzzAddressFastMatchesPlain(f *testing.F) {
	for _, name := range []string{"create_single.json", "create_multi.json", "create_trc20_usdt.json"} {
		f.Add(fixture(f, name))
	}
	f.Add([]byte(`{"address_in":null,"address_out":{"a":0.5,"b":"0.5"},"callback_url":7,"ADDRESS_IN":"x","status":"success","x":[1,{"y":null}]}`))
	f.Add([]byte(`{"address_in":"a","address_in":"b","minimum_transaction_coin":"1e-8","priority":true}`))
	f.Add([]byte(`{"address_out":null,"minimum_transaction_coin":null,"status":"error","error":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var w addressWire
		if !fastAddressWire(data, &w) {
			return
		}
		var fast Address
		fast.fromWire(&w)
		plain, err := plainAddress(data)
		if err != nil {
			t.Fatalf("fast path accepted what encoding/json refuses: %v", err)
		}
		if !reflect.DeepEqual(fast, plain) {
			t.Fatalf("fast %#v\nplain %#v", fast, plain)
		}
	})
}

// TestCallStateReachesTheTransport: the call's state (retry flag and
// attempt counter) reaches the transport as one context value.
func TestCallStateReachesTheTransport(t *testing.T) {
	var seen []*callState
	rt := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = append(seen, stateOf(r.Context()))
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(string(fixture(t, "create_single.json")))), Request: r}, nil
	})
	c, err := New(WithBaseURL("https://h.example"), WithHTTPClient(&http.Client{Transport: rt}))
	require.NoError(t, err)
	_, err = c.CreateAddress(t.Context(), "btc", &CreateOptions{Callback: benchCallback, Address: "1H6ZZpRmMnrw8ytepV3BYwMjYYnEkWDqVP"})
	require.NoError(t, err)
	require.Len(t, seen, 1)
	require.NotNil(t, seen[0])
	assert.True(t, seen[0].retry)
	assert.Equal(t, 1, seen[0].attempts)
}
