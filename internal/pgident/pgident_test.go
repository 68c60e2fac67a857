package pgident

import (
	"regexp"
	"strings"
	"testing"
)

func TestValid(t *testing.T) {
	for s, want := range map[string]bool{
		"cryptapi_callbacks": true, "_x": true, "A1": true, strings.Repeat("a", MaxLen): true,
		"": false, "1a": false, "a-b": false, "a b": false, `a"b`: false, "é": false, "a.b": false,
		strings.Repeat("a", MaxLen+1): false,
	} {
		if got := Valid(s, MaxLen); got != want {
			t.Errorf("Valid(%q) = %v, want %v", s, got, want)
		}
	}
	if Valid(strings.Repeat("a", 54), MaxLen-len("_callbacks")) {
		t.Error("a name too long for its suffix is valid")
	}
}

// FuzzValid: Valid agrees with the regular expression of an identifier.
func FuzzValid(f *testing.F) {
	for _, s := range []string{"a", "_1", "1", "a-b", "é", strings.Repeat("z", 64)} {
		f.Add(s, 63)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		re := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
		want := re.MatchString(s) && len(s) <= max
		if got := Valid(s, max); got != want {
			t.Fatalf("Valid(%q, %d) = %v, want %v", s, max, got, want)
		}
	})
}
