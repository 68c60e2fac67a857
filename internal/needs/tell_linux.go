package needs

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// tell writes note where the person who ran "go test ./..." reads it.
// go test runs each package's test binary with its output going to a
// buffer, and prints none of it for a passing package (not even
// stderr): so tell writes to go test's own standard output, which is
// the test binary's parent's.
//
// It does so only when the parent is the go command and does not already
// show the binary's output (go test without package arguments passes its
// own standard output on). It duplicates the go command's descriptor
// with pidfd_getfd (Linux 5.6), which shares its open file and offset:
// the note lands in its place among go test's lines whether that output
// is a terminal, a pipe ("| tee log") or a file ("> log 2>&1"), and the
// go command's next line follows it. Where the kernel refuses (pidfd_getfd
// needs the right to trace the parent; Yama's ptrace_scope=1 refuses it),
// it opens /proc/PPID/fd/1, which reaches a terminal, a pipe, or a file
// opened for appending (a file opened otherwise would have its own offset,
// and the go command would write over the note); else /dev/tty.
func tell(note string) {
	ppid := os.Getppid()
	proc := "/proc/" + strconv.Itoa(ppid)
	exe, err := os.Readlink(proc + "/exe")
	if err != nil || filepath.Base(exe) != "go" {
		return // not run by go test: standard output is the person's
	}
	out, err := os.Stat(proc + "/fd/1")
	if err != nil {
		return
	}
	if own, err := os.Stdout.Stat(); err == nil && os.SameFile(own, out) {
		return // the go command passes the binary's output on as it is
	}
	if f := dupFD(ppid, 1); f != nil {
		defer f.Close()
		if _, err := f.WriteString(note); err == nil {
			return
		}
	}
	if f := openFD(proc, 1, out); f != nil {
		defer f.Close()
		if _, err := f.WriteString(note); err == nil {
			return
		}
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		_, _ = tty.WriteString(note)
	}
}

// Linux system call numbers, the same on every architecture since 5.3.
const (
	sysPidfdOpen  = 434
	sysPidfdGetfd = 438
)

// dupFD returns a duplicate of process pid's descriptor fd, sharing its
// open file description, or nil.
func dupFD(pid, fd int) *os.File {
	pidfd, _, errno := syscall.Syscall(sysPidfdOpen, uintptr(pid), 0, 0)
	if errno != 0 {
		return nil
	}
	defer syscall.Close(int(pidfd))
	dup, _, errno := syscall.Syscall(sysPidfdGetfd, pidfd, uintptr(fd), 0)
	if errno != 0 {
		return nil
	}
	syscall.CloseOnExec(int(dup))
	return os.NewFile(dup, "go test's descriptor "+strconv.Itoa(fd))
}

// openFD opens the file behind process descriptor proc/fd/N when writing
// through a new open file description is safe: a terminal, a pipe or a
// socket, or a regular file the process writes in append mode.
func openFD(proc string, fd int, info os.FileInfo) *os.File {
	path := proc + "/fd/" + strconv.Itoa(fd)
	mode := info.Mode()
	flags := os.O_WRONLY
	switch {
	case mode&os.ModeNamedPipe != 0, mode&os.ModeSocket != 0:
	case mode&os.ModeCharDevice != 0:
	case mode.IsRegular():
		if !appends(proc, fd) {
			return nil
		}
		flags |= os.O_APPEND
	default:
		return nil
	}
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return nil
	}
	if mode&os.ModeCharDevice != 0 && !isTerminal(f) {
		f.Close() // such as /dev/null
		return nil
	}
	return f
}

// appends reports whether process descriptor proc/fd/N was opened with
// O_APPEND, from the octal flags in /proc/PID/fdinfo/N.
func appends(proc string, fd int) bool {
	b, err := os.ReadFile(proc + "/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&syscall.O_APPEND != 0
		}
	}
	return false
}

func isTerminal(f *os.File) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}
