//go:build unix

package invoke

import (
	"errors"
	"net"
	"syscall"
)

// stillOpen reports whether an idle connection can carry a request: the
// worker has not closed it (a server closes idle connections after its
// keep-alive timeout) and sent nothing unasked. It peeks without blocking.
func stillOpen(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	open := false
	err = raw.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		open = errors.Is(err, syscall.EAGAIN) // nothing to read, and not closed
		return true
	})
	return err == nil && open
}
