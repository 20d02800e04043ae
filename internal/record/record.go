// Package record reads, writes and checks the RECORD file of a Python
// wheel or installed distribution (the binary distribution format, PEP 427,
// and the recording of installed projects, PEP 376): one CSV line per file,
// `path,algorithm=digest,size`, the digest in urlsafe base64 without
// padding.
package record

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
)

// Entry is one RECORD line, its fields as written.
type Entry struct {
	Path, Hash, Size string
}

// Parse reads RECORD text: CSV as Python's csv module writes it (a path
// with a comma or a quote is quoted, quotes doubled inside; CRLF or LF line
// ends). Quotes out of place are taken as they are (an installed
// distribution's RECORD is rewritten from what is read here, and no line
// may be lost); blank lines are skipped; missing fields are empty.
func Parse(s string) []Entry {
	r := csv.NewReader(strings.NewReader(s))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	var out []Entry
	for {
		parts, err := r.Read()
		if err == io.EOF {
			return out
		}
		if err != nil {
			continue
		}
		if len(parts) == 0 || len(parts) == 1 && parts[0] == "" {
			continue
		}
		for len(parts) < 3 {
			parts = append(parts, "")
		}
		out = append(out, Entry{parts[0], parts[1], parts[2]})
	}
}

// Line is the RECORD line of path (without the line end); an empty hash
// writes `path,,` (RECORD's own line).
func Line(path, hash string, size int64) string {
	p := path
	if strings.ContainsAny(p, ",\"\r\n") {
		p = `"` + strings.ReplaceAll(p, `"`, `""`) + `"`
	}
	if hash == "" {
		return p + ",,"
	}
	return fmt.Sprintf("%s,%s,%d", p, hash, size)
}

// Digest spells a SHA-256 sum the way RECORD does.
func Digest(sum []byte) string {
	return "sha256=" + base64.RawURLEncoding.EncodeToString(sum)
}

// Hash is the RECORD digest of data.
func Hash(data []byte) string {
	sum := sha256.Sum256(data)
	return Digest(sum[:])
}

// UncheckedError is NewVerifier's error for a hash this package cannot
// compute: the algorithm may be a permitted one, but the content cannot
// be checked against it.
type UncheckedError struct{ Alg string }

func (e *UncheckedError) Error() string {
	return fmt.Sprintf("is hashed with %q in RECORD, which rocmdoctor cannot check (sha256, sha384, sha512)", e.Alg)
}

// Verifier checks content against one entry's hash and size.
type Verifier struct {
	e    Entry
	alg  string
	want []byte // the decoded digest
	h    hash.Hash
	n    int64
}

// NewVerifier reads e's hash field. It fails (with words for a finding)
// when the field is empty, names an algorithm the format does not permit
// (md5, sha1: "sha256 or better") or one this package does not compute,
// or holds a digest that is not urlsafe base64 of that algorithm's length.
func NewVerifier(e Entry) (*Verifier, error) {
	if e.Hash == "" {
		return nil, fmt.Errorf("has no hash in RECORD")
	}
	alg, val, ok := strings.Cut(e.Hash, "=")
	if !ok {
		return nil, fmt.Errorf("has a RECORD hash without an algorithm (%q; expected sha256=…)", e.Hash)
	}
	var h hash.Hash
	switch strings.ToLower(alg) {
	case "sha256":
		h = sha256.New()
	case "sha384":
		h = sha512.New384()
	case "sha512":
		h = sha512.New()
	case "md5", "sha1":
		return nil, fmt.Errorf("is hashed with %s in RECORD, which wheels may not use (sha256 or better)", alg)
	default:
		return nil, &UncheckedError{alg}
	}
	want, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(val, "="))
	if err != nil || len(want) != h.Size() {
		return nil, fmt.Errorf("has a malformed %s digest in RECORD (%q)", alg, val)
	}
	// Installers compare the text (installer) or split the field at "="
	// (wheel): a padded digest fails both, even when it is right.
	if strings.HasSuffix(val, "=") {
		return nil, fmt.Errorf("has a %s digest padded with '=' in RECORD, which installers do not accept (urlsafe base64 without padding)", alg)
	}
	return &Verifier{e: e, alg: strings.ToLower(alg), want: want, h: h}, nil
}

// Write hashes content.
func (v *Verifier) Write(p []byte) (int, error) {
	v.n += int64(len(p))
	return v.h.Write(p)
}

// Mismatch says how what was written differs from the entry ("" when it
// matches): the size first (when the entry has one), then the digest.
func (v *Verifier) Mismatch() string {
	if v.e.Size != "" {
		n, err := strconv.ParseInt(v.e.Size, 10, 64)
		switch {
		case err != nil:
			return fmt.Sprintf("RECORD gives its size as %q, not a number", v.e.Size)
		case n != v.n:
			return fmt.Sprintf("it is %d bytes, RECORD says %d", v.n, n)
		}
	}
	if got := v.h.Sum(nil); string(got) != string(v.want) {
		return fmt.Sprintf("its %s is %s, RECORD says %s", v.alg, base64.RawURLEncoding.EncodeToString(got), base64.RawURLEncoding.EncodeToString(v.want))
	}
	return ""
}
