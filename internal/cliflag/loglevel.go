package cliflag

import (
	"fmt"
	"io"
	"log/slog"
)

// LogLevel reads a --log-level value: debug, info, warn or error (any
// case, or slog's forms such as "info+2").
func LogLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("--log-level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// Logger is a text logger on w at the --log-level value level.
func Logger(w io.Writer, level string) (*slog.Logger, error) {
	l, err := LogLevel(level)
	if err != nil {
		return nil, err
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}
