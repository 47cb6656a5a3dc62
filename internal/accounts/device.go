package accounts

import "github.com/mileusna/useragent"

// ParseDevice reads the browser, platform and form factor from a User-Agent.
// Unknown parts are left empty; the web app then shows "Unknown Device".
func ParseDevice(userAgent string) Device {
	if userAgent == "" {
		return Device{}
	}
	ua := useragent.Parse(userAgent)
	return Device{Browser: ua.Name, Platform: ua.OS, Mobile: ua.Mobile || ua.Tablet}
}
