package proc

import "syscall"

// setDeathSignal has the kernel send sig to the child when the test binary
// dies.
func setDeathSignal(a *syscall.SysProcAttr, sig syscall.Signal) { a.Pdeathsig = sig }
