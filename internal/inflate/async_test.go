package inflate

import (
	"bytes"
	"errors"
	"math/rand"
	"testing"
	"time"
)

// asyncInput is a stream large enough for the asynchronous writer and
// several output buffers: mixed text and noise at level 1.
func asyncInput(t *testing.T) (data, comp []byte) {
	rng := rand.New(rand.NewSource(3))
	for len(data) < 3*outBuf {
		if rng.Intn(2) == 0 {
			data = append(data, bytes.Repeat([]byte("ELF symbol table .dynstr "), 1+rng.Intn(200))...)
		} else {
			noise := make([]byte, rng.Intn(8000))
			rng.Read(noise)
			data = append(data, noise...)
		}
	}
	comp = deflate(t, data, 1)
	if len(comp) < asyncMin {
		t.Fatalf("%d compressed bytes: too few for the asynchronous writer", len(comp))
	}
	return data, comp
}

// slowWriter checks that a buffer it was given does not change while it
// is being written: it keeps a copy, waits, and compares.
type slowWriter struct {
	out     bytes.Buffer
	writes  int
	changed int
}

func (w *slowWriter) Write(p []byte) (int, error) {
	before := append([]byte(nil), p...)
	time.Sleep(20 * time.Millisecond)
	if !bytes.Equal(before, p) {
		w.changed++
	}
	w.writes++
	w.out.Write(before)
	return len(p), nil
}

func TestAsyncWriterKeepsBuffersWhileWriting(t *testing.T) {
	data, comp := asyncInput(t)
	var w slowWriter
	idx, err := Decode(&w, bytes.NewReader(comp), int64(len(comp)))
	if err != nil {
		t.Fatal(err)
	}
	if w.changed > 0 {
		t.Fatalf("%d of %d buffers changed while they were being written", w.changed, w.writes)
	}
	if w.writes < 3 {
		t.Fatalf("%d writes: the output did not go through several buffers", w.writes)
	}
	if !bytes.Equal(w.out.Bytes(), data) {
		t.Fatalf("output differs (%d bytes, want %d)", w.out.Len(), len(data))
	}
	checkIndex(t, idx, comp, data)
}

type failingWriter struct {
	n, failAt int
	err       error
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.n++
	if w.n == w.failAt {
		return 0, w.err
	}
	return len(p), nil
}

// A write error is returned whether it comes from a buffer written in the
// background or from the last one, written at the end.
func TestAsyncWriterReportsWriteErrors(t *testing.T) {
	_, comp := asyncInput(t)
	var count failingWriter
	if _, err := Decode(&count, bytes.NewReader(comp), int64(len(comp))); err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{1, 2, count.n} {
		w := &failingWriter{failAt: at, err: errors.New("disk full")}
		_, err := Decode(w, bytes.NewReader(comp), int64(len(comp)))
		if !errors.Is(err, w.err) {
			t.Errorf("write %d of %d fails: Decode returned %v", at, count.n, err)
		}
	}
}
