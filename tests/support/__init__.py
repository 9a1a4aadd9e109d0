"""What the tests and the benchmarks share: a live `serve` on a loopback port
(`live_service`), generated fixtures of any size (`gen_fixtures`), a child process's own CPU,
wall and peak (`peak`), a registry written into SQLite and PostgreSQL (`registry_db`), and the
package's modules as text for the product tests that read the code (`package_source`). The
benchmarks under bench/ import these; the tests import nothing from bench/."""
