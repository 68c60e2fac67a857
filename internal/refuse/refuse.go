// Package refuse answers a callback that is not acknowledged, the one way
// both callback handlers (callback's and invoice's) do it.
package refuse

import (
	"context"
	"log/slog"
	"net/http"
)

// Write answers status with its generic text, never "*ok*" (a 200 becomes
// 500, since anything but "*ok*" makes the service deliver again), with
// allow as the Allow header of a 405, and logs msg on l when l is not nil:
// at warning level, error level from 500 on, with the status, attrs and
// the error. Neither the answer nor the line holds a signature or a body.
func Write(ctx context.Context, w http.ResponseWriter, l *slog.Logger, status int, allow, msg string, err error, attrs ...slog.Attr) {
	if status == http.StatusOK {
		status = http.StatusInternalServerError
	}
	if status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", allow)
	}
	if l != nil {
		level := slog.LevelWarn
		if status >= 500 {
			level = slog.LevelError
		}
		all := append([]slog.Attr{slog.Int("status", status)}, attrs...)
		if err != nil {
			all = append(all, slog.String("error", err.Error()))
		}
		l.LogAttrs(ctx, level, msg, all...)
	}
	http.Error(w, http.StatusText(status), status)
}
