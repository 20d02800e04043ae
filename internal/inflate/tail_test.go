package inflate

import (
	"bytes"
	"compress/flate"
	"errors"
	"io"
	"sync/atomic"
	"testing"
)

// Tail, begun anywhere in a stream of coded blocks, yields exactly the end
// of the data, as long a part of it as the decoder knew for certain.
func TestTailIsTheEndOfTheData(t *testing.T) {
	data, comp := asyncInput(t)
	n := int64(len(comp))
	for _, from := range []int64{0, 1, n / 3, n / 2, n - n/10} {
		end, err := Tail(bytes.NewReader(comp), n, from, new(atomic.Bool))
		if err != nil {
			t.Fatalf("from %d: %v", from, err)
		}
		tail := make([]byte, end.Len())
		if k, err := end.ReadAt(tail, 0); k != len(tail) || err != nil {
			t.Fatalf("from %d: read %d of %d bytes: %v", from, k, len(tail), err)
		}
		if len(tail) == 0 || !bytes.Equal(tail, data[len(data)-len(tail):]) {
			t.Fatalf("from %d: %d bytes that are not the end of the data", from, len(tail))
		}
		// Reads anywhere, across the decoder's buffers, and past the end.
		for _, off := range []int64{0, 1, end.Len() / 3, end.Len() - 5000, end.Len() - 1} {
			b := make([]byte, 5<<20)
			k, err := end.ReadAt(b, off)
			want := min(int64(len(b)), end.Len()-off)
			if int64(k) != want || !bytes.Equal(b[:k], tail[off:off+want]) || (want < int64(len(b))) != (err == io.EOF) {
				t.Fatalf("from %d: ReadAt(%d) = %d, %v; want %d bytes", from, off, k, err, want)
			}
		}
		end.Release()
		// From the middle on, it knows most of what it decodes: the data
		// holds no match reaching back more than 32 KiB at a time.
		if from == n/2 && len(tail) < len(data)/3 {
			t.Errorf("from the middle: only the last %d of %d bytes", len(tail), len(data))
		}
	}
}

func TestTailErrors(t *testing.T) {
	data, comp := asyncInput(t)
	n := int64(len(comp))
	for _, from := range []int64{-1, n, n + 5} {
		if _, err := Tail(bytes.NewReader(comp), n, from, new(atomic.Bool)); !errors.Is(err, ErrNoTail) {
			t.Errorf("from %d: %v, want ErrNoTail", from, err)
		}
	}
	var abort atomic.Bool
	abort.Store(true)
	if _, err := Tail(bytes.NewReader(comp), n, n/2, &abort); !errors.Is(err, errAbandoned) {
		t.Errorf("aborted: %v, want %v", err, errAbandoned)
	}
	// Stored blocks are not searched for.
	stored := deflate(t, data[:1<<20], flate.NoCompression)
	if _, err := Tail(bytes.NewReader(stored), int64(len(stored)), int64(len(stored)/2), new(atomic.Bool)); !errors.Is(err, errNoBlock) {
		t.Errorf("stored stream: %v, want %v", err, errNoBlock)
	}
	// A stream cut short is the decoder's error.
	if _, err := Tail(bytes.NewReader(comp), n-1000, n/2, new(atomic.Bool)); err == nil {
		t.Error("a stream cut short decoded without error")
	}
}
