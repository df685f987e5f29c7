package cli

import (
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
)

// A low port refused to an ordinary user says what lets the server bind
// it; other failures keep their own words. (The refusal itself cannot be
// made here: the tests may run as root, to whom every port is open.)
func TestListenErrorNamesTheCapability(t *testing.T) {
	refused := &net.OpError{Op: "listen", Net: "tcp", Addr: &net.TCPAddr{Port: 443},
		Err: &os.SyscallError{Syscall: "bind", Err: syscall.EACCES}}
	err := listenError("tls.listen_https", refused)
	if !strings.HasPrefix(err.Error(), "tls.listen_https: listen tcp :443: bind: permission denied; ") ||
		!strings.Contains(err.Error(), "CAP_NET_BIND_SERVICE") || !errors.Is(err, syscall.EACCES) {
		t.Errorf("refused bind: %v", err)
	}
	inUse := &net.OpError{Op: "listen", Net: "tcp", Err: &os.SyscallError{Syscall: "bind", Err: syscall.EADDRINUSE}}
	if err := listenError("listen", inUse); strings.Contains(err.Error(), "CAP_NET_BIND_SERVICE") || !strings.HasPrefix(err.Error(), "listen: ") {
		t.Errorf("address in use: %v", err)
	}
}
