// Package collect reads a sequence whole, for tests of the SDK's
// iterators.
package collect

import "iter"

// All returns the values of seq up to its first error, and that error.
func All[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}
