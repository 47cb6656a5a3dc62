package proc

import (
	"net"
	"strconv"
	"testing"
)

// TestFreePortIsOutsideTheEphemeralRange: FreePort's ports come from below
// the kernel's ephemeral range, where no outgoing connection takes its local
// port, are never handed out twice, and can be listened on.
func TestFreePortIsOutsideTheEphemeralRange(t *testing.T) {
	low := ephemeralLow()
	seen := map[int]bool{}
	for range 50 {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if port < freePortMin || port >= low {
			t.Fatalf("port %d is outside [%d, %d)", port, freePortMin, low)
		}
		if seen[port] {
			t.Fatalf("port %d handed out twice", port)
		}
		seen[port] = true
	}
	for port := range seen {
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("listen on a port FreePort gave: %v", err)
		}
		_ = ln.Close()
		break
	}
}
