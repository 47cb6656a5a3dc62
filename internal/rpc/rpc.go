package rpc

import (
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"

	"connectrpc.com/connect"

	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1direct"
	"github.com/fairplay/fairplay/internal/gen/openapi"
	"github.com/fairplay/fairplay/internal/routes"
)

// Handlers are every service's handler.
type Handlers struct {
	Auth     *AuthHandler
	Game     *GameHandler
	Fairness *FairnessHandler
	Admin    *AdminHandler
	Wallet   *WalletHandler
	Live     *LiveHandler
}

// Mount registers the Connect services and the /api JSON routes on mux. The
// /api routes are read off the protos' google.api.http rules
// (internal/routes) and call their procedures through the Connect
// handlers, interceptors included. handle wraps each handler with per-route
// middleware (metrics labels); csrf wraps the /api routes with the
// anti-forgery check. It returns the /api patterns it registered.
func Mount(mux *http.ServeMux, h Handlers, log *slog.Logger, csrf func(http.Handler) http.Handler,
	handle func(pattern string, h http.Handler) http.Handler) []string {
	// The rules around every unary call, the first outermost: Connect runs
	// them as one interceptor (one call, which each rule sees), /api calls
	// them directly (invoker).
	rules := []callMiddleware{errorsOf(log), textRule, linesOf(h.Auth.accounts), accessOf(h.Auth.accounts)}
	opts := []connect.HandlerOption{
		connect.WithInterceptors(rulesInterceptor(rules)),
		// Browsers cannot send this header cross-site without a CORS
		// preflight, which is Connect's protection against request forgery.
		connect.WithRequireConnectProtocolHeader(),
		connect.WithReadMaxBytes(maxBody),
	}
	opts = append(opts, connectCodecs...)
	errs := connect.NewErrorWriter(opts...)
	for _, svc := range []func() (string, http.Handler){
		func() (string, http.Handler) { return fairplayv1connect.NewAuthServiceHandler(h.Auth, opts...) },
		func() (string, http.Handler) { return fairplayv1connect.NewGameServiceHandler(h.Game, opts...) },
		func() (string, http.Handler) { return fairplayv1connect.NewFairnessServiceHandler(h.Fairness, opts...) },
		func() (string, http.Handler) { return fairplayv1connect.NewAdminServiceHandler(h.Admin, opts...) },
		func() (string, http.Handler) { return fairplayv1connect.NewWalletServiceHandler(h.Wallet, opts...) },
		func() (string, http.Handler) {
			path, handler := fairplayv1connect.NewLiveServiceHandler(h.Live, opts...)
			return path, liveStreamControl(handler)
		},
	} {
		path, handler := svc()
		mux.Handle(path, handle(path, notStored(getMessageChecked(errs, handler))))
	}

	// The unary procedures of every service, for /api's direct calls.
	calls := fairplayv1direct.Handlers{
		AuthService:     h.Auth,
		GameService:     h.Game,
		FairnessService: h.Fairness,
		AdminService:    h.Admin,
		WalletService:   h.Wallet,
	}.Calls()

	// Streams are served to the JSON world by hand: the live bets feed as
	// Server-Sent Events.
	streams := map[string]http.Handler{
		fairplayv1connect.LiveServiceWatchBetsProcedure: http.HandlerFunc(h.Live.serveSSE),
	}
	var api []string
	apiHandle := func(pattern string, handler http.Handler) {
		api = append(api, pattern)
		mux.Handle(pattern, handle(pattern, csrf(handler)))
	}
	for _, rt := range routes.MustAll() {
		var handler http.Handler
		if rt.Streaming() {
			handler = streams[rt.ConnectPath()]
		} else if fn := calls[rt.ConnectPath()]; fn != nil {
			handler = transcode(rt, invoker(fn, rules), log)
		}
		if handler == nil {
			panic("rpc: no handler for " + rt.Pattern() + " (" + rt.ConnectPath() + ")")
		}
		apiHandle(rt.Pattern(), handler)
	}
	apiHandle("GET /api/csrf", http.HandlerFunc(csrfToken))
	apiHandle("GET /api/openapi.json", http.HandlerFunc(serveOpenAPI))
	mux.Handle("/api/", handle("/api/", csrf(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeMessage(w, http.StatusNotFound, "Not found")
	}))))
	return api
}

// serveOpenAPI serves the OpenAPI 3.1 document of /api, generated from the
// protos by hack/openapi.
func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(openapi.JSON)
}

// notStored marks every Connect answer Cache-Control: no-store, as the
// answers of /api's calls are: the procedures without side effects (ListBets, GetBet, GetUser, the
// limits) may be called with GET, and a browser may otherwise keep a
// player's bets or account in its cache after they sign out.
// getMessageChecked refuses a Connect GET whose message is base64 (base64=1)
// that does not decode, with 400 invalid_argument and no more than that,
// as a POST's body that does not decode is refused (codec.go). connect-go
// answered it 500 unknown with Go's own words ("read message: illegal
// base64 data at input byte 0"), before any rule ran: found by a review
// playing a hostile outsider. Like connect-go, it takes padded or
// unpadded URL-safe base64.
func getMessageChecked(errs *connect.ErrorWriter, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.RawQuery != "" {
			if q := r.URL.Query(); q.Get("base64") == "1" {
				msg, enc := q.Get("message"), base64.URLEncoding
				if len(msg)%4 != 0 {
					enc = base64.RawURLEncoding
				}
				if _, err := enc.DecodeString(msg); err != nil {
					_ = errs.Write(w, r, connect.NewError(connect.CodeInvalidArgument,
						errors.New("unmarshal message: the message is not URL-safe base64")))
					return
				}
			}
		}
		h.ServeHTTP(w, r)
	})
}

func notStored(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Cache-Control"] = noStore
		h.ServeHTTP(w, r)
	})
}
