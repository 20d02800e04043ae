// Package rawpath joins and splits paths the way the dynamic loader and
// the linkers build them: by concatenation, never cleaned. The kernel
// resolves a ".." where the lookup reaches it, after the symbolic links
// before it, so "dir/link/../lib" names the lib next to where link leads,
// which filepath.Join's lexical cleaning ("dir/lib") does not.
package rawpath

import "strings"

// Join is the path ld.so opens for name in search directory dir (glibc's
// open_path), and the path GNU ld and lld try for a library in a -L
// directory: dir without its trailing slashes (but "/"), a slash, name;
// an empty dir is the working directory (name alone), as for ld.so.
func Join(dir, name string) string {
	if dir == "" {
		return name
	}
	for len(dir) > 1 && dir[len(dir)-1] == '/' {
		dir = dir[:len(dir)-1]
	}
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// Dir is path up to its last slash, as glibc takes an object's $ORIGIN
// from the name it was opened by: the slash kept when it is the only one,
// "." when there is none.
func Dir(path string) string {
	switch i := strings.LastIndexByte(path, '/'); {
	case i < 0:
		return "."
	case i == 0:
		return "/"
	default:
		return path[:i]
	}
}
