// Package rpc is Fairplay's transport: the Connect-RPC handlers and the JSON
// /api routes of SPEC.md, which call the very same handler methods. It is the
// only place that turns domain errors into Connect codes and HTTP statuses.
package rpc

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"connectrpc.com/connect"

	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/postgres"
	"github.com/fairplay/fairplay/internal/problem"
)

// internalMessage is all a user learns of an unexpected failure, and
// unavailableMessage of a database that cannot be reached for the moment.
const (
	internalMessage    = "Something went wrong. Please try again."
	unavailableMessage = "The service is temporarily unavailable. Please try again in a moment."
)

type classified struct {
	code       connect.Code
	status     int
	message    string
	retryAfter int // seconds; 0 when not rate limited
}

// classify maps an error from a domain to what the caller sees. Unexpected
// errors are logged with their cause and shown only as internalMessage.
func classify(ctx context.Context, log *slog.Logger, err error) classified {
	if ce := new(connect.Error); errors.As(err, &ce) {
		return classified{code: ce.Code(), status: httpStatus(ce.Code()), message: ce.Message()}
	}
	if p, ok := problem.As(err); ok {
		c := classified{message: p.Message}
		switch p.Kind {
		case problem.KindInvalid:
			c.code, c.status = connect.CodeInvalidArgument, http.StatusBadRequest
		case problem.KindUnauthenticated:
			c.code, c.status = connect.CodeUnauthenticated, http.StatusUnauthorized
		case problem.KindForbidden:
			c.code, c.status = connect.CodePermissionDenied, http.StatusForbidden
		case problem.KindNotFound:
			c.code, c.status = connect.CodeNotFound, http.StatusNotFound
		case problem.KindConflict:
			c.code, c.status = connect.CodeAborted, http.StatusConflict
		case problem.KindTooManyRequests:
			c.code, c.status = connect.CodeResourceExhausted, http.StatusTooManyRequests
			c.retryAfter = max(1, int((p.RetryAfter.Seconds())+0.999))
		case problem.KindUnavailable:
			c.code, c.status = connect.CodeUnavailable, http.StatusServiceUnavailable
		default:
			c.code, c.status = connect.CodeInternal, http.StatusInternalServerError
		}
		return c
	}
	if errors.Is(err, money.ErrInvalidBet) {
		return classified{code: connect.CodeInvalidArgument, status: http.StatusBadRequest, message: money.ErrInvalidBet.Error()}
	}
	if errors.Is(err, money.ErrOverflow) {
		// Only an amount given in a request can overflow (the bet limits
		// keep every payout and balance in range), so it is the caller's
		// input: never a 500. Logged, since it points at a missing check.
		log.WarnContext(ctx, "amount out of range", "err", err)
		return classified{code: connect.CodeInvalidArgument, status: http.StatusBadRequest, message: "Amount is too large"}
	}
	if errors.Is(err, context.Canceled) {
		return classified{code: connect.CodeCanceled, status: 499, message: "Request canceled"}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		log.WarnContext(ctx, "request deadline exceeded", "err", err)
		return classified{code: connect.CodeDeadlineExceeded, status: http.StatusGatewayTimeout, message: "The request took too long. Please try again."}
	}
	if postgres.IsUnavailable(err) {
		log.WarnContext(ctx, "database unavailable", "err", err)
		return classified{code: connect.CodeUnavailable, status: http.StatusServiceUnavailable,
			message: unavailableMessage, retryAfter: 1}
	}
	log.ErrorContext(ctx, "request failed", "err", err)
	return classified{code: connect.CodeInternal, status: http.StatusInternalServerError, message: internalMessage}
}

func httpStatus(c connect.Code) int {
	switch c {
	case connect.CodeInvalidArgument, connect.CodeOutOfRange:
		return http.StatusBadRequest
	case connect.CodeUnauthenticated:
		return http.StatusUnauthorized
	case connect.CodePermissionDenied:
		return http.StatusForbidden
	case connect.CodeNotFound:
		return http.StatusNotFound
	case connect.CodeAlreadyExists, connect.CodeAborted, connect.CodeFailedPrecondition:
		return http.StatusConflict
	case connect.CodeResourceExhausted:
		return http.StatusTooManyRequests
	case connect.CodeUnavailable:
		return http.StatusServiceUnavailable
	case connect.CodeDeadlineExceeded:
		return http.StatusGatewayTimeout
	case connect.CodeCanceled:
		return 499 // nginx's "client closed request": nobody reads it
	default:
		return http.StatusInternalServerError
	}
}

// connectError turns a domain error into a Connect error with a deliberate
// code; a rate limit carries Retry-After in its metadata.
func connectError(ctx context.Context, log *slog.Logger, err error) *connect.Error {
	c := classify(ctx, log, err)
	ce := connect.NewError(c.code, errors.New(c.message))
	if c.retryAfter > 0 {
		ce.Meta().Set("Retry-After", strconv.Itoa(c.retryAfter))
	}
	return ce
}

// ErrorInterceptor maps every error a Connect handler returns through
// classify, so no raw error text ever reaches a client as CodeUnknown.
func ErrorInterceptor(log *slog.Logger) connect.Interceptor { return asInterceptor(errorsOf(log)) }

// errorsOf is ErrorInterceptor's rule, for Connect and /api alike.
func errorsOf(log *slog.Logger) callMiddleware {
	return func(next unaryCall) unaryCall {
		return func(ctx context.Context, c *call) (connect.AnyResponse, error) {
			res, err := next(ctx, c)
			if ce := new(connect.Error); errors.As(err, &ce) {
				return nil, ce // already deliberate (and its metadata kept)
			}
			if err != nil {
				return nil, connectError(ctx, log, err)
			}
			return res, nil
		}
	}
}
