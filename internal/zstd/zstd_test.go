package zstd

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

func inputs(t *testing.T) map[string][]byte {
	r := rand.New(rand.NewPCG(7, 8))
	random := make([]byte, 300<<10)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	text := bytes.Repeat([]byte("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack- __CLANG_OFFLOAD_BUNDLE__ "), 9000)
	skewed := make([]byte, 500<<10)
	for i := range skewed {
		skewed[i] = "aaaaaaabbbbccd\x00\x01"[r.IntN(16)]
	}
	elf, _ := os.ReadFile(testenv.Testdata("libgpu.so"))
	bundle, _ := os.ReadFile(testenv.Testdata("bundle.hipfb"))
	big := bytes.Repeat(append(append([]byte(nil), bundle...), elf...), 40)
	zeros := make([]byte, 400<<10) // RLE blocks
	binary := make([]byte, 1<<20)  // two symbols: many short sequences, raw Huffman weights
	for i := range binary {
		binary[i] = "ab"[r.IntN(2)]
	}
	noisy := make([]byte, 200<<10) // few matches: literal-only blocks
	for i := range noisy {
		noisy[i] = byte(r.NormFloat64()*30 + 128)
	}
	runs := bytes.Repeat(random[:40], 1) // a literal run of one byte between matches: RLE literals
	for len(runs) < 300<<10 {
		runs = append(runs, random[:40]...)
		runs = append(runs, bytes.Repeat([]byte{'z'}, 1+r.IntN(3))...)
	}
	nibbles := make([]byte, 300<<10) // a 16-symbol alphabet: Huffman weights stored raw
	for i := range nibbles {
		nibbles[i] = byte(r.IntN(16))
	}
	toks := make([][]byte, 256)
	for i := range toks {
		toks[i] = []byte{byte(r.Uint32()), byte(r.Uint32()), byte(r.Uint32())}
	}
	var tokens []byte // 3-byte tokens: over 0x7f00 sequences in a block at -19
	for len(tokens) < 400<<10 {
		tokens = append(tokens, toks[r.IntN(len(toks))]...)
	}
	return map[string][]byte{
		"nibbles": nibbles, "tokens": tokens,
		"zeros": zeros, "binary": binary, "noisy": noisy, "runs": runs,
		"empty": nil, "one": {42}, "random": random, "text": text, "skewed": skewed,
		"elf": elf, "bundle": bundle, "big": big, "mixed": append(append(bytes.Clone(text), random[:5000]...), skewed...),
	}
}

// Streams made by the zstd command at several levels (and with the long
// window, checksums, and without) decode to their input.
func TestAgainstZstdCommand(t *testing.T) {
	zstdCmd := testenv.Tool(t, "zstd", "zstd")
	dir := t.TempDir()
	for name, data := range inputs(t) {
		in := filepath.Join(dir, name)
		if err := os.WriteFile(in, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"-1"}, {"-3"}, {"-9"}, {"-19"}, {"--ultra", "-22"}, {"-5", "--no-check"}, {"--long=27", "-12"}, {"--fast=3"}, {"-3", "--block-size=4096"}} {
			out := in + ".zst"
			cmd := exec.Command(zstdCmd, append(append([]string{"-q", "-f"}, args...), "-o", out, in)...)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("zstd %v: %v\n%s", args, err, b)
			}
			comp, _ := os.ReadFile(out)
			got, err := io.ReadAll(NewReader(bytes.NewReader(comp)))
			if err != nil {
				t.Errorf("%s %v: %v", name, args, err)
				continue
			}
			if !bytes.Equal(got, data) {
				t.Errorf("%s %v: decoded %d bytes, want %d (first difference at %d)", name, args, len(got), len(data), firstDiff(got, data))
			}
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// Two frames and a skippable frame in one stream decode back to back.
func TestConcatenatedFrames(t *testing.T) {
	zstdCmd := testenv.Tool(t, "zstd", "zstd")
	var stream, want bytes.Buffer
	for i, s := range []string{"first frame ", "second frame, a little longer ", ""} {
		cmd := exec.Command(zstdCmd, "-q", "-c", "-"+strconv.Itoa(1+i))
		cmd.Stdin = bytes.NewReader([]byte(s))
		b, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		stream.Write(b)
		want.WriteString(s)
		stream.Write([]byte{0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'x', 'y', 'z'}) // skippable
	}
	got, err := io.ReadAll(NewReader(&stream))
	if err != nil || !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("got %q, %v; want %q", got, err, want.Bytes())
	}
}

func TestCorruptInputNeverPanics(t *testing.T) {
	zstdCmd := testenv.Tool(t, "zstd", "zstd")
	cmd := exec.Command(zstdCmd, "-q", "-c", "-19")
	cmd.Stdin = bytes.NewReader(inputs(t)["mixed"])
	good, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < 3000; i++ {
		b := bytes.Clone(good)
		for k := 0; k < 1+r.IntN(4); k++ {
			b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
		}
		if r.IntN(4) == 0 {
			b = b[:r.IntN(len(b))]
		}
		io.Copy(io.Discard, NewReader(bytes.NewReader(b))) // errors are fine, panics are not
	}
}

func TestDictionaryRefused(t *testing.T) {
	// Frame header: magic, FHD with Dictionary_ID_flag 1 and single segment,
	// a one-byte dictionary ID, a one-byte content size.
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x21, 7, 0}
	if _, err := io.ReadAll(NewReader(bytes.NewReader(b))); err != ErrDictionary {
		t.Fatalf("err = %v, want ErrDictionary", err)
	}
}

// The checked-in streams decode without the zstd command (the Go-only tier).
func TestFixtures(t *testing.T) {
	for zst, orig := range map[string]string{"bundle.hipfb.zst": "bundle.hipfb", "libgpu.so.zst": "libgpu.so"} {
		comp, err := os.ReadFile(filepath.Join("testdata", zst))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(testenv.Testdata(orig))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(NewReader(bytes.NewReader(comp)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, %v; want the %d bytes of %s", zst, len(got), err, len(want), orig)
		}
		// A flipped bit in a checksummed frame is an error, not wrong output.
		if zst == "bundle.hipfb.zst" {
			bad := bytes.Clone(comp)
			bad[len(bad)-6] ^= 0x10
			if out, err := io.ReadAll(NewReader(bytes.NewReader(bad))); err == nil && !bytes.Equal(out, want) {
				t.Errorf("corrupted stream decoded to different bytes without an error")
			}
		}
	}
}

func FuzzReader(f *testing.F) {
	for _, n := range []string{"bundle.hipfb.zst", "libgpu.so.zst"} {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// Errors are fine, panics are not; output is capped like a bundle's.
		io.Copy(io.Discard, io.LimitReader(NewReader(bytes.NewReader(b)), 64<<20))
	})
}

// A frame whose window is past MaxWindow (1 GiB here) is refused before
// anything is allocated for it.
func TestWindowLimit(t *testing.T) {
	// Magic, a frame header descriptor with no flags, a window descriptor
	// of exponent 20 (1 << 30), then a last raw block of 3 bytes.
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 20 << 3, 0x19, 0x00, 0x00, 'a', 'b', 'c'}
	if _, err := io.ReadAll(NewReader(bytes.NewReader(b))); err == nil {
		t.Fatal("a 1 GiB window was accepted")
	}
	b[5] = 0 // 1 KiB
	if got, err := io.ReadAll(NewReader(bytes.NewReader(b))); err != nil || string(got) != "abc" {
		t.Fatalf("a 1 KiB window: %q, %v", got, err)
	}
}

// BenchmarkDecode decodes the "mixed" input compressed with zstd -19
// (text, random and skewed bytes, 1.5 MB), as a compressed offload
// bundle's payload is read.
func BenchmarkDecode(b *testing.B) {
	zstdCmd := testenv.Tool(b, "zstd", "zstd")
	data := inputs(nil)["mixed"]
	cmd := exec.Command(zstdCmd, "-q", "-c", "-19")
	cmd.Stdin = bytes.NewReader(data)
	comp, err := cmd.Output()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := io.Copy(io.Discard, NewReader(bytes.NewReader(comp))); err != nil {
			b.Fatal(err)
		}
	}
}
