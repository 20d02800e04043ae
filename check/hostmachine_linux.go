package check

import "syscall"

// kernelMachine is the running kernel's machine (uname -m: "x86_64"), ""
// when it cannot be told. A 32-bit build of rocmdoctor on an x86-64
// kernel still checks a tree of x86-64 programs.
func kernelMachine() string {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return ""
	}
	b := make([]byte, 0, len(u.Machine))
	for _, c := range u.Machine {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}
