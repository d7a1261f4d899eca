package loglevel

import (
	"log/slog"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in      string
		def     slog.Level
		want    slog.Level
		wantErr bool
	}{
		{"", slog.LevelWarn, slog.LevelWarn, false},
		{"  ", slog.LevelInfo, slog.LevelInfo, false},
		{"debug", slog.LevelWarn, slog.LevelDebug, false},
		{"INFO", slog.LevelWarn, slog.LevelInfo, false},
		{"warning", slog.LevelInfo, slog.LevelWarn, false},
		{"Error", slog.LevelInfo, slog.LevelError, false},
		{"verbose", slog.LevelInfo, 0, true},
		{"-4", slog.LevelInfo, 0, true},
	} {
		got, err := Parse(tc.in, tc.def)
		if (err != nil) != tc.wantErr || (!tc.wantErr && got != tc.want) {
			t.Errorf("Parse(%q, %v) = %v, %v; want %v (error %v)", tc.in, tc.def, got, err, tc.want, tc.wantErr)
		}
	}
}
