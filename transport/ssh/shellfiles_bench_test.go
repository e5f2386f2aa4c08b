package ssh

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"testing"

	"github.com/autoshell/agent/testenv"
)

// BenchmarkFileTransfer writes and reads back 8 MiB over SFTP and through
// the shell, on the in-process server and on the Dropbear + BusyBox host
// (with its sftp-server): the price of a host without SFTP.
func BenchmarkFileTransfer(b *testing.B) {
	data := make([]byte, 8<<20)
	rand.Read(data)
	hosts := map[string]func(b *testing.B) (testenv.Host, string){
		"inprocess": func(b *testing.B) (testenv.Host, string) {
			srv := testenv.StartSSHServer(b, testenv.SSHServerOptions{})
			return srv.Host, srv.Home
		},
		"dropbear": func(b *testing.B) (testenv.Host, string) {
			d := testenv.StartDropbear(b, testenv.DropbearOptions{SFTP: true})
			return d.Host, d.Home
		},
	}
	for _, host := range []string{"inprocess", "dropbear"} {
		for _, shell := range []bool{false, true} {
			name := host + "/sftp"
			if shell {
				name = host + "/shell"
			}
			b.Run(name, func(b *testing.B) {
				h, home := hosts[host](b)
				tr, err := Dial(context.Background(), hostConfig(h), Options{ShellFiles: shell})
				if err != nil {
					b.Fatal(err)
				}
				defer tr.Close()
				b.SetBytes(int64(2 * len(data)))
				for b.Loop() {
					if _, err := tr.WriteFile(context.Background(), home+"/bench.bin", bytes.NewReader(data), 0o600); err != nil {
						b.Fatal(err)
					}
					if _, err := tr.ReadFile(context.Background(), home+"/bench.bin", io.Discard); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
