// Command ferretdb-testbed runs FerretDB's embeddable package on a SQLite directory, so the test bed
// has a MongoDB-protocol server without a real mongod. The upstream cmd/ferretdb panics when built
// with `go install` (no build/version/version.txt, FerretDB issue #2982); embedding avoids that.
package main

import (
	"context"
	"flag"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27018", "TCP address to listen on")
	sqliteURL := flag.String("sqlite-url", "file:data/", "SQLite directory URI (must end with /)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: *sqliteURL,
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := f.Run(ctx); err != nil {
		log.Fatal(err)
	}
}
