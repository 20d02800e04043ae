//go:build !unix

package regfile

import "os"

// Open is os.Open for a regular file.
func Open(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, NotRegular(path, st.Mode())
	}
	return f, nil
}
