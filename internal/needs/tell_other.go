//go:build !linux

package needs

import "os"

// tell writes note on the terminal, when there is one: go test hides
// everything a passing package's test binary prints. (On Linux it reaches
// go test's own output; see tell_linux.go.)
func tell(note string) {
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		_, _ = tty.WriteString(note)
	}
}
