package main

import (
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newLogger builds zap: JSON by default, console when format is "console"
// or when it is "auto" and stderr is a terminal (w an *os.File or a
// termLine).
func newLogger(cfg LoggingConfig, w io.Writer) *zap.Logger {
	var lvl zapcore.Level
	if err := lvl.Set(cfg.Level); err != nil {
		lvl = zapcore.InfoLevel
	}
	console := cfg.Format == "console"
	if cfg.Format == "auto" || cfg.Format == "" {
		if f, ok := w.(interface{ Fd() uintptr }); ok {
			console = isTerminal(f)
		}
	}
	var enc zapcore.Encoder
	if console {
		ec := zap.NewDevelopmentEncoderConfig()
		ec.EncodeLevel = zapcore.CapitalColorLevelEncoder
		enc = zapcore.NewConsoleEncoder(ec)
	} else {
		ec := zap.NewProductionEncoderConfig()
		ec.EncodeTime = zapcore.ISO8601TimeEncoder
		enc = zapcore.NewJSONEncoder(ec)
	}
	return zap.New(zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(w)), lvl), zap.AddCaller())
}
