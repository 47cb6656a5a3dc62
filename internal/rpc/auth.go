package rpc

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"connectrpc.com/connect"

	"github.com/fairplay/fairplay/internal/accounts"
	fairplayv1 "github.com/fairplay/fairplay/internal/gen/fairplay/v1"
	"github.com/fairplay/fairplay/internal/gen/fairplay/v1/fairplayv1connect"
)

// AuthHandler serves AuthService.
type AuthHandler struct {
	accounts *accounts.Service
	log      *slog.Logger
	cookies  sessionCookies
}

var _ fairplayv1connect.AuthServiceHandler = (*AuthHandler)(nil)

// NewAuthHandler returns the AuthService handler. secureCookies: the site
// is served over HTTPS, so the session cookie is Secure and __Host- named.
func NewAuthHandler(svc *accounts.Service, log *slog.Logger, secureCookies bool) *AuthHandler {
	return &AuthHandler{accounts: svc, log: log, cookies: sessionCookies{secure: secureCookies}}
}

// handOut gives a new refresh token to the caller: in the session cookie,
// and then not in the body, when inCookie; else in the body.
func (h *AuthHandler) handOut(res connect.AnyResponse, refreshToken string, inCookie bool) string {
	if !inCookie {
		return refreshToken
	}
	h.cookies.set(res.Header(), refreshToken)
	return ""
}

// Register implements AuthService.Register.
func (h *AuthHandler) Register(ctx context.Context, req *connect.Request[fairplayv1.RegisterRequest]) (*connect.Response[fairplayv1.RegisterResponse], error) {
	m := req.Msg
	res, err := h.accounts.Register(ctx, accounts.RegisterInput{
		Username: m.GetUsername(), Email: m.GetEmail(), Password: m.GetPassword(), BotToken: m.GetTurnstileToken(),
	}, clientFrom(ctx))
	if err != nil {
		return nil, err
	}
	out := connect.NewResponse(&fairplayv1.RegisterResponse{Token: res.AccessToken, User: toProtoUser(res.User, false)})
	out.Msg.RefreshToken = h.handOut(out, res.RefreshToken, h.cookies.wanted(req.Header()))
	return out, nil
}

// Login implements AuthService.Login.
func (h *AuthHandler) Login(ctx context.Context, req *connect.Request[fairplayv1.LoginRequest]) (*connect.Response[fairplayv1.LoginResponse], error) {
	m := req.Msg
	res, err := h.accounts.Login(ctx, accounts.LoginInput{
		Login: m.GetUsername(), Password: m.GetPassword(), BotToken: m.GetTurnstileToken(),
		TwoFactorCode: m.GetTwoFactorCode(),
	}, clientFrom(ctx))
	if err != nil {
		return nil, err
	}
	if res.TwoFactorRequired {
		return connect.NewResponse(&fairplayv1.LoginResponse{TwoFactorRequired: true}), nil
	}
	out := connect.NewResponse(&fairplayv1.LoginResponse{Token: res.AccessToken, User: toProtoUser(res.User, false)})
	out.Msg.RefreshToken = h.handOut(out, res.RefreshToken, h.cookies.wanted(req.Header()))
	return out, nil
}

// Refresh implements AuthService.Refresh. Without a refresh token in the
// body it uses the session cookie's, and the next one goes back in the
// cookie only (session_cookie.go).
func (h *AuthHandler) Refresh(ctx context.Context, req *connect.Request[fairplayv1.RefreshRequest]) (*connect.Response[fairplayv1.RefreshResponse], error) {
	token, fromCookie := h.refreshToken(req.Msg.GetRefreshToken(), req.Header())
	inCookie := fromCookie || h.cookies.wanted(req.Header())
	res, err := h.accounts.Refresh(ctx, token, clientFrom(ctx))
	if err != nil {
		// A refused token of the cookie ends the browser's session; a
		// refused one of the body (say, an older app's, to move into the
		// cookie) says nothing of the session the cookie holds.
		if fromCookie || (inCookie && token == "") {
			return nil, h.cookies.refusal(ctx, h.log, err)
		}
		return nil, err
	}
	out := connect.NewResponse(&fairplayv1.RefreshResponse{Token: res.AccessToken, User: toProtoUser(res.User, false)})
	out.Msg.RefreshToken = h.handOut(out, res.RefreshToken, inCookie)
	return out, nil
}

// refreshToken is the body's refresh token, else the session cookie's
// (fromCookie).
func (h *AuthHandler) refreshToken(body string, header http.Header) (token string, fromCookie bool) {
	if body != "" {
		return body, false
	}
	token = h.cookies.token(header)
	return token, token != ""
}

// Logout implements AuthService.Logout: the body's refresh token, else the
// session cookie's, whose cookies it then clears, whatever the answer: a
// logout refused for the moment (a rate limit that someone behind the same
// address used up, a database failing over) must not leave the browser
// holding a session its owner believes ended. The session then stays live
// on the server with nobody holding its refresh token, until it expires or
// is revoked from another device.
func (h *AuthHandler) Logout(ctx context.Context, req *connect.Request[fairplayv1.LogoutRequest]) (*connect.Response[fairplayv1.LogoutResponse], error) {
	token, fromCookie := h.refreshToken(req.Msg.GetRefreshToken(), req.Header())
	inCookie := fromCookie || h.cookies.wanted(req.Header())
	if err := h.accounts.Logout(ctx, token, clientFrom(ctx)); err != nil {
		if inCookie {
			return nil, h.cookies.cleared(ctx, h.log, err)
		}
		return nil, err
	}
	out := connect.NewResponse(&fairplayv1.LogoutResponse{Message: "Logged out successfully"})
	if inCookie {
		h.cookies.clear(out.Header())
	}
	return out, nil
}

// GetUser implements AuthService.GetUser. Its access is ACCESS_PLAYER: the
// session is checked by the statement that reads the account (a balance read
// is one round trip).
func (h *AuthHandler) GetUser(ctx context.Context, req *connect.Request[fairplayv1.GetUserRequest]) (*connect.Response[fairplayv1.GetUserResponse], error) {
	u, err := h.accounts.SessionUser(ctx, principal(ctx))
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.GetUserResponse{User: toProtoUser(u, false)}), nil
}

// ListSessions implements AuthService.ListSessions.
func (h *AuthHandler) ListSessions(ctx context.Context, req *connect.Request[fairplayv1.ListSessionsRequest]) (*connect.Response[fairplayv1.ListSessionsResponse], error) {
	p := principal(ctx)
	list, err := h.accounts.Sessions(ctx, p)
	if err != nil {
		return nil, err
	}
	out := &fairplayv1.ListSessionsResponse{Sessions: make([]*fairplayv1.Session, 0, len(list))}
	for _, s := range list {
		out.Sessions = append(out.Sessions, toProtoSession(s, s.ID == p.SessionID))
	}
	return connect.NewResponse(out), nil
}

// RevokeSession implements AuthService.RevokeSession.
func (h *AuthHandler) RevokeSession(ctx context.Context, req *connect.Request[fairplayv1.RevokeSessionRequest]) (*connect.Response[fairplayv1.RevokeSessionResponse], error) {
	p := principal(ctx)
	if err := h.accounts.RevokeSession(ctx, p, req.Msg.GetSessionId()); err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.RevokeSessionResponse{Message: "Session revoked successfully"}), nil
}

// RevokeOtherSessions implements AuthService.RevokeOtherSessions.
func (h *AuthHandler) RevokeOtherSessions(ctx context.Context, req *connect.Request[fairplayv1.RevokeOtherSessionsRequest]) (*connect.Response[fairplayv1.RevokeOtherSessionsResponse], error) {
	p := principal(ctx)
	n, err := h.accounts.RevokeOtherSessions(ctx, p, req.Msg.GetCurrentRefreshToken())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.RevokeOtherSessionsResponse{Message: "Other sessions revoked successfully", Revoked: int32(n)}), nil
}

// ChangePassword implements AuthService.ChangePassword.
func (h *AuthHandler) ChangePassword(ctx context.Context, req *connect.Request[fairplayv1.ChangePasswordRequest]) (*connect.Response[fairplayv1.ChangePasswordResponse], error) {
	p := principal(ctx)
	if err := h.accounts.ChangePassword(ctx, p, req.Msg.GetCurrentPassword(), req.Msg.GetNewPassword(), clientFrom(ctx)); err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.ChangePasswordResponse{Message: "Password changed successfully"}), nil
}

// GetConfig implements AuthService.GetConfig.
func (h *AuthHandler) GetConfig(_ context.Context, _ *connect.Request[fairplayv1.GetConfigRequest]) (*connect.Response[fairplayv1.GetConfigResponse], error) {
	key := h.accounts.BotSiteKey()
	res := &fairplayv1.GetConfigResponse{TurnstileSiteKey: key, DevelopmentBotCheck: key == ""}
	if key == "" {
		res.DevelopmentToken = accounts.DevelopmentBotToken
	}
	return connect.NewResponse(res), nil
}

// toProtoUser converts an account; withCreated adds createdAt for admin views.
func toProtoUser(u accounts.User, withCreated bool) *fairplayv1.User {
	pu := &fairplayv1.User{Id: u.ID.String(), Username: u.Username, Email: u.Email, Balance: u.Balance.String(), IsAdmin: u.IsAdmin,
		HideUsername: u.HideUsername, TwoFactorEnabled: u.TwoFactor}
	if withCreated {
		created := u.CreatedAt.UTC().Format(time.RFC3339)
		pu.CreatedAt = &created
	}
	return pu
}

func toProtoSession(s accounts.Session, current bool) *fairplayv1.Session {
	d := accounts.ParseDevice(s.UserAgent)
	mobile := "Desktop"
	if d.Mobile {
		mobile = "Mobile"
	}
	return &fairplayv1.Session{
		Id:         s.ID.String(),
		LastUsedAt: s.LastUsedAt.UTC().Format(time.RFC3339),
		IpAddress:  s.IPAddress,
		IpScope:    string(accounts.ScopeOf(s.IPAddress)),
		CreatedAt:  s.CreatedAt.UTC().Format(time.RFC3339),
		Current:    current,
		DeviceInfo: &fairplayv1.DeviceInfo{UserAgent: s.UserAgent, Platform: d.Platform, Browser: d.Browser, Mobile: mobile},
	}
}

// UpdatePreferences implements AuthService.UpdatePreferences: the caller's
// own account only (the token names it; the request names no user).
func (h *AuthHandler) UpdatePreferences(ctx context.Context, req *connect.Request[fairplayv1.UpdatePreferencesRequest]) (*connect.Response[fairplayv1.UpdatePreferencesResponse], error) {
	p := principal(ctx)
	u, err := h.accounts.UpdatePreferences(ctx, p, accounts.Preferences{HideUsername: req.Msg.HideUsername})
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.UpdatePreferencesResponse{User: toProtoUser(u, false)}), nil
}

// GetTwoFactor implements AuthService.GetTwoFactor.
func (h *AuthHandler) GetTwoFactor(ctx context.Context, _ *connect.Request[fairplayv1.GetTwoFactorRequest]) (*connect.Response[fairplayv1.GetTwoFactorResponse], error) {
	p := principal(ctx)
	u, err := h.accounts.CurrentUser(ctx, p)
	if err != nil {
		return nil, err
	}
	left, err := h.accounts.RecoveryCodesLeft(ctx, p)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.GetTwoFactorResponse{Enabled: u.TwoFactor, RecoveryCodesLeft: int32(min(left, 1000))}), nil //nolint:gosec // bounded
}

// SetupTwoFactor implements AuthService.SetupTwoFactor.
func (h *AuthHandler) SetupTwoFactor(ctx context.Context, _ *connect.Request[fairplayv1.SetupTwoFactorRequest]) (*connect.Response[fairplayv1.SetupTwoFactorResponse], error) {
	s, err := h.accounts.SetupTwoFactor(ctx, principal(ctx))
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.SetupTwoFactorResponse{
		Secret: s.Secret, OtpauthUrl: s.OtpauthURL, QrSize: int32(s.QRSize), QrPath: s.QRPath, //nolint:gosec // a QR code is at most 177 wide
	}), nil
}

// EnableTwoFactor implements AuthService.EnableTwoFactor.
func (h *AuthHandler) EnableTwoFactor(ctx context.Context, req *connect.Request[fairplayv1.EnableTwoFactorRequest]) (*connect.Response[fairplayv1.EnableTwoFactorResponse], error) {
	p := principal(ctx)
	codes, err := h.accounts.EnableTwoFactor(ctx, p, req.Msg.GetCode(), req.Msg.GetPassword(), clientFrom(ctx))
	if err != nil {
		return nil, err
	}
	u, err := h.accounts.CurrentUser(ctx, p)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.EnableTwoFactorResponse{RecoveryCodes: codes, User: toProtoUser(u, false)}), nil
}

// DisableTwoFactor implements AuthService.DisableTwoFactor.
func (h *AuthHandler) DisableTwoFactor(ctx context.Context, req *connect.Request[fairplayv1.DisableTwoFactorRequest]) (*connect.Response[fairplayv1.DisableTwoFactorResponse], error) {
	p := principal(ctx)
	if err := h.accounts.DisableTwoFactor(ctx, p, req.Msg.GetCode(), req.Msg.GetPassword(), clientFrom(ctx)); err != nil {
		return nil, err
	}
	u, err := h.accounts.CurrentUser(ctx, p)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&fairplayv1.DisableTwoFactorResponse{Message: "Two-factor authentication is off", User: toProtoUser(u, false)}), nil
}
