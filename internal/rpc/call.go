package rpc

import (
	"context"
	"net/http"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	"github.com/fairplay/fairplay/internal/accounts"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1direct"
)

// call is one unary call as the interceptors' rules see it, whichever way it
// came: a Connect request (asInterceptor) or an /api route (invoker).
type call struct {
	procedure string // the Connect path, /fairplay.v1.GameService/PlayDice
	header    http.Header
	msg       proto.Message
	// claims is the caller's token as linesOf verified it (signature,
	// issuer, expiry; its session not looked up), for accessOf.
	claims    accounts.Principal
	hasClaims bool
	// req is the Connect request the call came as (nil on /api).
	req connect.AnyRequest
}

// unaryCall runs a call; callMiddleware is one rule around it (errors,
// text, access). Each rule is written once, as a callMiddleware: Connect
// gets it as an interceptor, /api calls it directly.
type (
	unaryCall      func(ctx context.Context, c *call) (connect.AnyResponse, error)
	callMiddleware func(next unaryCall) unaryCall
)

// asInterceptor is a rule as a Connect interceptor (unary calls; streams
// check their own request).
func asInterceptor(mw callMiddleware) connect.Interceptor {
	return connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		run := mw(func(ctx context.Context, c *call) (connect.AnyResponse, error) { return next(ctx, c.req) })
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			msg, _ := req.Any().(proto.Message)
			return run(ctx, &call{procedure: req.Spec().Procedure, header: req.Header(), msg: msg, req: req})
		}
	})
}

// rulesInterceptor is rules (the first outermost) as Connect's interceptor.
func rulesInterceptor(rules []callMiddleware) connect.Interceptor { return asInterceptor(chain(rules)) }

// chain is rules as one rule, the first outermost, as
// connect.WithInterceptors orders them. Connect runs the rules as one
// interceptor, so they share one call: the claims linesOf verified reach
// accessOf, as on /api, where each was verified twice when every rule was
// an interceptor of its own, with a call of its own.
func chain(rules []callMiddleware) callMiddleware {
	return func(next unaryCall) unaryCall {
		for i := len(rules) - 1; i >= 0; i-- {
			next = rules[i](next)
		}
		return next
	}
}

// invoker is the in-process call of one unary procedure (fn, generated
// from the protos by hack/direct) through rules (the first outermost, as
// connect.WithInterceptors orders them): what an /api route runs instead of
// a second HTTP request to the Connect handler. The handler gets the call's
// headers but the protocol's own (protocolHeader).
//
// Before this, /api marshalled the decoded message to protobuf, served it to
// the Connect handler as a new in-process HTTP request, and unmarshalled the
// answer: about a sixth of the server's CPU per bet (make bench's profile).
// Then it called the handler's method through reflect.Value.Call: ten
// allocations of a dice bet's ~127.
func invoker(fn fairplayv1direct.Call, rules []callMiddleware) unaryCall {
	return chain(rules)(func(ctx context.Context, c *call) (connect.AnyResponse, error) {
		return fn(ctx, c.msg, c.header, forwarded)
	})
}

// forwarded tells the headers an /api request passes to its handler.
func forwarded(name string) bool { return !protocolHeader(name) }
