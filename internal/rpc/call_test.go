package rpc

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"

	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
)

type seedImpl struct {
	got *connect.Request[fairplayv1.SetClientSeedRequest]
}

func (s *seedImpl) SetClientSeed(_ context.Context, req *connect.Request[fairplayv1.SetClientSeedRequest]) (*connect.Response[fairplayv1.SetClientSeedResponse], error) {
	s.got = req
	res := connect.NewResponse(&fairplayv1.SetClientSeedResponse{})
	res.Header().Set("X-Answer", "yes")
	return res, nil
}

type wrongImpl struct{}

// SetClientSeed takes another message than the proto's.
func (wrongImpl) SetClientSeed(context.Context, *connect.Request[fairplayv1.PlayDiceRequest]) (*connect.Response[fairplayv1.SetClientSeedResponse], error) {
	return nil, nil
}

// invoker calls the handler method with the message and headers, through
// the rules in Connect's order (the first outermost), and refuses a method
// that does not match the proto when the routes are mounted.
func TestInvoker(t *testing.T) {
	md := fairplayv1.File_fairplay_v1_fairness_proto.Services().ByName("FairnessService").Methods().ByName("SetClientSeed")
	if md == nil {
		t.Fatal("no FairnessService.SetClientSeed in the protos")
	}
	var order []string
	rule := func(name string) callMiddleware {
		return func(next unaryCall) unaryCall {
			return func(ctx context.Context, c *call) (connect.AnyResponse, error) {
				order = append(order, name+" "+c.procedure)
				return next(ctx, c)
			}
		}
	}
	impl := &seedImpl{}
	run, err := invoker(impl, md, []callMiddleware{rule("outer"), rule("inner")})
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(context.Background(), &call{
		procedure: "/fairplay.v1.FairnessService/SetClientSeed",
		header:    http.Header{"Authorization": {"Bearer t"}},
		msg:       &fairplayv1.SetClientSeedRequest{ClientSeed: "abc"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, ", "); got != "outer /fairplay.v1.FairnessService/SetClientSeed, inner /fairplay.v1.FairnessService/SetClientSeed" {
		t.Errorf("rules ran as %q", got)
	}
	if impl.got.Msg.GetClientSeed() != "abc" || impl.got.Header().Get("Authorization") != "Bearer t" {
		t.Errorf("handler got %v with headers %v", impl.got.Msg, impl.got.Header())
	}
	if res.Header().Get("X-Answer") != "yes" {
		t.Errorf("response headers %v", res.Header())
	}

	if _, err := invoker(wrongImpl{}, md, nil); err == nil || !strings.Contains(err.Error(), "the proto says") {
		t.Errorf("a method taking another message: %v", err)
	}
	if _, err := invoker(struct{}{}, md, nil); err == nil || !strings.Contains(err.Error(), "has no method SetClientSeed") {
		t.Errorf("no such method: %v", err)
	}
}

func TestProtocolHeader(t *testing.T) {
	for k, want := range map[string]bool{
		"Content-Type": true, "content-length": true, "CONTENT-ENCODING": true, "Accept-Encoding": true,
		"Transfer-Encoding": true, "Connection": true, "TE": true, "Trailer": true, "Upgrade": true,
		"Connect-Protocol-Version": true, "connect-timeout-ms": true, "Trailer-Grpc-Status": true,
		"Authorization": false, "Cookie": false, "X-Request-Id": false, "Content": false, "Connect": false,
		"User-Agent": false, "X-Forwarded-For": false, "Te-Extra": false, "": false,
	} {
		if got := protocolHeader(k); got != want {
			t.Errorf("protocolHeader(%q) = %v, want %v", k, got, want)
		}
	}
}
