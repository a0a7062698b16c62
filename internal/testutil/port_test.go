package testutil

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

func TestReservedPort(t *testing.T) {
	r := ReservePort(t)
	if _, err := net.Dial("tcp", r.Addr()); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("a reserved port refuses connections: got %v", err)
	}
	if ln, err := net.Listen("tcp", r.Addr()); err == nil {
		ln.Close()
		t.Fatal("another socket could take the reserved port")
	}
	ln := r.Listen(t)
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
		}
		done <- err
	}()
	c, err := net.Dial("tcp", r.Addr())
	if err != nil {
		t.Fatalf("the port listens once asked: %v", err)
	}
	c.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
