package rpc

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"connectrpc.com/connect"

	"github.com/fairplay/fairplay/internal/accounts"
	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
	"github.com/fairplay/fairplay/internal/live"
	"github.com/fairplay/fairplay/internal/money"
	"github.com/fairplay/fairplay/internal/problem"
)

// LiveHandler serves LiveService: the live bets feed, as a Connect server
// stream and as Server-Sent Events (GET /api/live/bets). It needs no
// sign-in: the feed carries only what the whole floor may see.
type LiveHandler struct {
	hub *live.Hub
	log *slog.Logger
}

var _ fairplayv1connect.LiveServiceHandler = (*LiveHandler)(nil)

// NewLiveHandler returns the LiveService handler on hub.
func NewLiveHandler(hub *live.Hub, log *slog.Logger) *LiveHandler {
	return &LiveHandler{hub: hub, log: log}
}

// Timing of a stream.
const (
	// liveHeartbeat is how often an idle stream sends something (an SSE
	// comment, an empty Connect message), so proxies that close idle
	// connections keep it open.
	liveHeartbeat = 15 * time.Second
	// liveWriteTimeout bounds each write: a reader that does not read
	// blocks the write, which then fails and ends the stream (the server's
	// own WriteTimeout, made for requests, would end every stream).
	liveWriteTimeout = 10 * time.Second
	// liveRetry is the reconnection delay SSE clients are given.
	liveRetry = 3 * time.Second
)

// Refusals of a stream.
var (
	errLiveFull = problem.Unavailable(
		"Too many people are watching the live bets on this server. Please try again in a moment.")
	errLiveClosed = problem.Unavailable("The server is restarting. Please reconnect.")
	errMinAmount  = problem.Invalid("minAmount must be a non-negative amount")
	errLiveMine   = problem.TooManyRequests(
		"Too many live bets streams from your address. Close another tab and try again.", liveRetryAfter*time.Second)
)

// liveRetryAfter is the Retry-After of a refused stream, in seconds.
const liveRetryAfter = 5

// filter reads WatchBetsRequest.min_amount.
func liveFilter(minAmount *string) (live.Filter, error) {
	if minAmount == nil || *minAmount == "" {
		return live.Filter{}, nil
	}
	a, err := money.Parse(*minAmount)
	if err != nil || a < 0 {
		return live.Filter{}, errMinAmount
	}
	return live.Filter{MinAmount: a}, nil
}

// watch opens a watcher for the caller's address (accounts.NetworkOf),
// translating the hub's refusals.
func (h *LiveHandler) watch(ctx context.Context, f live.Filter) (*live.Watcher, error) {
	w, err := h.hub.Watch(f, accounts.NetworkOf(clientFrom(ctx).IP))
	switch {
	case errors.Is(err, live.ErrClientFull):
		return nil, errLiveMine
	case errors.Is(err, live.ErrFull):
		return nil, errLiveFull
	case errors.Is(err, live.ErrClosed):
		return nil, errLiveClosed
	}
	return w, err
}

// toProtoLiveBets converts a message's bets.
func toProtoLiveBets(bets []live.Bet) *fairplayv1.WatchBetsResponse {
	out := &fairplayv1.WatchBetsResponse{Bets: make([]*fairplayv1.LiveBet, len(bets))}
	for i, b := range bets {
		out.Bets[i] = &fairplayv1.LiveBet{Id: b.ID.String(), Game: b.Game, Username: b.Username, Hidden: b.Hidden,
			Amount: b.Amount.String(), Multiplier: b.Multiplier.String(), Payout: b.Payout.String(),
			SettledAt: b.SettledAt.UTC().Format(time.RFC3339Nano)}
		if b.Hidden {
			out.Bets[i].Username = ""
		}
	}
	return out
}

// streamControlKey carries a stream's http.ResponseController from
// liveStreamControl to WatchBets.
type streamControlKey struct{}

// liveStreamControl gives the Connect stream handler its connection's
// ResponseController, which Connect does not expose, so that WatchBets can
// lift the server's read and write timeouts and bound each write itself.
func liveStreamControl(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), streamControlKey{}, rc)))
	})
}

// openStream lifts the connection's read deadline: the server's
// ReadTimeout would otherwise end a long-lived GET (the server's background
// read of an idle request times out and cancels it).
func openStream(rc *http.ResponseController) {
	if rc != nil {
		_ = rc.SetReadDeadline(time.Time{})
	}
}

// writeDeadline bounds the next write.
func writeDeadline(rc *http.ResponseController) {
	if rc != nil {
		_ = rc.SetWriteDeadline(time.Now().Add(liveWriteTimeout))
	}
}

// WatchBets implements LiveService.WatchBets.
func (h *LiveHandler) WatchBets(ctx context.Context, req *connect.Request[fairplayv1.WatchBetsRequest], stream *connect.ServerStream[fairplayv1.WatchBetsResponse]) error {
	// TextInterceptor sees unary calls only: a stream checks its request here.
	if err := checkText(req.Msg.ProtoReflect()); err != nil {
		return connect.NewError(connect.CodeInvalidArgument, errors.New("Invalid request: "+err.Error()))
	}
	f, err := liveFilter(req.Msg.MinAmount)
	if err != nil {
		return connectError(ctx, h.log, err)
	}
	w, err := h.watch(ctx, f)
	if err != nil {
		c := classify(ctx, h.log, err)
		ce := connect.NewError(c.code, errors.New(c.message))
		ce.Meta().Set("Retry-After", strconv.Itoa(liveRetryAfter))
		return ce
	}
	defer w.Stop()
	rc, _ := ctx.Value(streamControlKey{}).(*http.ResponseController)
	openStream(rc)
	stream.ResponseHeader().Set("Cache-Control", "no-store")
	stream.ResponseHeader().Set("X-Accel-Buffering", "no")
	// The first (empty) message tells the client the stream is open.
	msg := &fairplayv1.WatchBetsResponse{}
	for {
		writeDeadline(rc)
		if err := stream.Send(msg); err != nil {
			return nil // the client has gone
		}
		bets, err := w.Next(ctx, liveHeartbeat)
		if err != nil {
			// The hub ended the stream (shutdown, or the reader fell
			// behind) or the client left: end it cleanly; clients reconnect.
			return nil
		}
		msg = toProtoLiveBets(bets)
	}
}

// serveSSE serves GET /api/live/bets?minAmount=: one "bets" event per
// message, its data the WatchBetsResponse as /api JSON (decimals as
// numbers), a comment as heartbeat.
func (h *LiveHandler) serveSSE(rw http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	// The query is read as the unary routes read theirs, with the same
	// answers to a bad value or a NUL byte.
	obj := map[string]any{}
	for key, vals := range r.URL.Query() {
		if len(vals) > 0 {
			obj[key] = vals[0]
		}
	}
	req := &fairplayv1.WatchBetsRequest{}
	if err := decodeObject(req.ProtoReflect(), obj); err != nil {
		writeMessage(rw, http.StatusBadRequest, "Invalid request: "+err.Error())
		return
	}
	if err := checkText(req.ProtoReflect()); err != nil {
		writeMessage(rw, http.StatusBadRequest, "Invalid request: "+err.Error())
		return
	}
	f, err := liveFilter(req.MinAmount)
	if err != nil {
		writeError(ctx, h.log, rw, err)
		return
	}
	w, err := h.watch(ctx, f)
	if err != nil {
		rw.Header().Set("Retry-After", strconv.Itoa(liveRetryAfter))
		writeError(ctx, h.log, rw, err)
		return
	}
	defer w.Stop()
	rc := http.NewResponseController(rw)
	openStream(rc)
	hd := rw.Header()
	hd.Set("Content-Type", "text/event-stream; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no")
	rw.WriteHeader(http.StatusOK)
	var buf bytes.Buffer
	buf.WriteString("retry: " + strconv.Itoa(int(liveRetry/time.Millisecond)) + "\n: live bets\n\n")
	for {
		writeDeadline(rc)
		if _, err := rw.Write(buf.Bytes()); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
		bets, err := w.Next(ctx, liveHeartbeat)
		if err != nil {
			return
		}
		buf.Reset()
		if len(bets) == 0 {
			buf.WriteString(": heartbeat\n\n")
			continue
		}
		buf.WriteString("event: bets\ndata: ")
		encodeMessage(&buf, toProtoLiveBets(bets).ProtoReflect())
		buf.WriteString("\n\n")
	}
}
