//go:build !linux

package proc

import "syscall"

// setDeathSignal does nothing where the kernel has no parent-death signal:
// only the tests' own clean-up stops the children there.
func setDeathSignal(*syscall.SysProcAttr, syscall.Signal) {}
