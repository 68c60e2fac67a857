package callback

import (
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parseQuery must give what url.ParseQuery gives, whichever path it takes.
func checkQueryLikeNetURL(t *testing.T, raw string) {
	t.Helper()
	got, keys, err := parseQuery(raw)
	want, wantErr := url.ParseQuery(raw)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%q: error %v, url.ParseQuery error %v", raw, err, wantErr)
	}
	pairs, ok := scanQuery(raw, nil)
	if ok != (err == nil) {
		t.Fatalf("%q: scanQuery ok %v, parseQuery error %v", raw, ok, err)
	}
	if err != nil {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: got %v, url.ParseQuery %v", raw, got, want)
	}
	if pv := pairValues(pairs); !reflect.DeepEqual(pv, want) {
		t.Fatalf("%q: scanQuery %v, url.ParseQuery %v", raw, pv, want)
	}
	for _, p := range pairs {
		if s := string(p.appendText(nil)); s != p.text() {
			t.Fatalf("%q: appendText %q, text %q", raw, s, p.text())
		}
	}
	if keys != nil {
		if len(keys) != len(got) {
			t.Fatalf("%q: keys %q for %d parameters", raw, keys, len(got))
		}
		for _, k := range keys {
			if _, ok := got[k]; !ok {
				t.Fatalf("%q: key %q not in the map", raw, k)
			}
		}
	}
}

var querySeeds = []string{
	"", "&", "&&", "a", "a=", "=", "=b", "a=1&b=2", "a=1&a=2", "a=1&&b=2&", "&a=1",
	"a=%41&b=%zz", "a=%4", "a+b=c+d", "a=1;b=2", "%=1", "a=%7B%22USD%22%3A+%223.20%22%7D",
	"a=1&b=%41&c=3&d=+&e=5", "k=v=w", "é=ü", "a=%00",
}

func TestParseQueryMatchesNetURL(t *testing.T) {
	for _, raw := range querySeeds {
		checkQueryLikeNetURL(t, raw)
	}
	checkQueryLikeNetURL(t, queryOf(fixture(t, "get_confirmed.target")))
	checkQueryLikeNetURL(t, strings.Repeat("a=1&", maxQueryParams+1))
	// At the limit of url.ParseQuery, and one past it, counting '&'.
	checkQueryLikeNetURL(t, strings.Repeat("a=1&", maxQueryParams-1)+"b=2")
	checkQueryLikeNetURL(t, strings.Repeat("a=1&", maxQueryParams-1)+"b=2&")
	checkQueryLikeNetURL(t, strings.Repeat("&", maxQueryParams-1))
	checkQueryLikeNetURL(t, strings.Repeat("&", maxQueryParams))
}

func TestParseQueryValuesDoNotAlias(t *testing.T) {
	v, keys, err := parseQuery("a=1&b=2&c=3")
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, keys)
	v["a"] = append(v["a"], "x")
	assert.Equal(t, []string{"2"}, v["b"])
	assert.Equal(t, []string{"1", "x"}, v["a"])

	src := source{get: true, fields: v, query: v, queryKeys: keys}
	known := map[string]bool{"c": true}
	noKeys := src
	noKeys.queryKeys = nil
	assert.Equal(t, noKeys.custom(known), src.custom(known), "same with and without the key order")
	c := src.custom(known)
	c["a"] = append(c["a"], "y")
	c["b"][0] = "changed"
	assert.Equal(t, []string{"1", "x", "y"}, c["a"])
	assert.Equal(t, []string{"1", "x"}, v["a"], "Custom shares nothing with Raw")
	assert.Equal(t, []string{"2"}, v["b"], "Custom shares nothing with Raw")
}

func FuzzParseQueryLikeNetURL(f *testing.F) {
	for _, s := range querySeeds {
		f.Add(s)
	}
	f.Add(fixtureF(f, "get_confirmed.target"))
	f.Add(fixtureF(f, "post_form_confirmed.body"))
	f.Fuzz(func(t *testing.T, raw string) {
		checkQueryLikeNetURL(t, raw)
	})
}
