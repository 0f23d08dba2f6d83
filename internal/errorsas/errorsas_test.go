package errorsas

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"testing"
)

type marker interface {
	error
	Marked()
}

type markedError struct{}

func (markedError) Error() string { return "marked" }
func (markedError) Marked()       {}

func TestAsTypeFindsWrappedPointer(t *testing.T) {
	inner := &net.DNSError{Err: "no such host", Name: "example.invalid", IsNotFound: true}
	err := fmt.Errorf("dial: %w", inner)
	got, ok := AsType[*net.DNSError](err)
	if !ok || got != inner {
		t.Fatalf("AsType[*net.DNSError] = %v, %v; want the wrapped error, true", got, ok)
	}
}

func TestAsTypeFindsInterface(t *testing.T) {
	err := errors.Join(fs.ErrNotExist, fmt.Errorf("wrapped: %w", markedError{}))
	got, ok := AsType[marker](err)
	if !ok || got == nil {
		t.Fatalf("AsType[marker] = %v, %v; want the marked error, true", got, ok)
	}
}

func TestAsTypeMissReturnsZero(t *testing.T) {
	got, ok := AsType[*net.OpError](fs.ErrNotExist)
	if ok || got != nil {
		t.Fatalf("AsType[*net.OpError](fs.ErrNotExist) = %v, %v; want nil, false", got, ok)
	}
	if _, ok := AsType[*net.OpError](nil); ok {
		t.Fatal("AsType on a nil error matched")
	}
}
