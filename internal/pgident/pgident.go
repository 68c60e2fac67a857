// Package pgident checks the PostgreSQL identifiers the stores build
// their table names from, so that a name given by the caller is used
// quoted and whole, never cut short or read as SQL.
package pgident

// MaxLen is the longest identifier PostgreSQL keeps (NAMEDATALEN - 1
// bytes); a longer one would be cut short silently.
const MaxLen = 63

// Valid reports whether s is a plain identifier of at most max bytes: a
// letter or underscore, then letters, digits or underscores. A store that
// appends a suffix to a name passes MaxLen minus the suffix's length.
func Valid(s string, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}
