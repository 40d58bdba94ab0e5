package main

import "time"

// pythonSteps is the script both Python recordings follow.
func pythonSteps() []step {
	return []step{
		{in: "print(6*7)\n"},
		{in: "1/0\n"},
		{in: "for i in range(3):\n    print(i)\n\n"},
		{in: "print('>>> ', end='', flush=True); import time; time.sleep(0.005); print('more')\n"},
		{in: "print('\\n'.join(str(i) for i in range(2000)))\n"},
		{in: "input('name? ')\n"},
		{in: "bob\n"},
		{in: "import time; time.sleep(5)\n", intr: 300 * time.Millisecond},
		{in: "print('after')\n"},
		{in: "import threading; threading.Timer(0.3, lambda: print('tick', flush=True)).start()\n"},
		{in: "print('x' * 200)\n", settle: time.Second},
		{in: "import sys; sys.exit(3)\n"},
	}
}

// shellSteps is the script the shell recordings follow. Without bg it
// starts no background job: busybox ash on pipes takes the end of one for
// the end of its input, and exits.
func shellSteps(bg bool) []step {
	steps := []step{
		{in: "echo $((6*7))\n"},
		{in: "for i in 1 2 3; do echo $i; done\n"},
		{in: "if true; then\necho yes\nfi\n"},
		{in: "printf '$ '; sleep 0.005; echo more\n"},
		{in: "ls /nonexistent-dir\n"},
		{in: "sleep 5\n", intr: 300 * time.Millisecond},
		{in: "echo after\n"},
	}
	if bg {
		steps = append(steps, step{in: "(sleep 0.3; echo tick) &\n"})
	}
	return append(steps,
		step{in: "echo " + long + "\n", settle: time.Second},
		step{in: "printf 'a\\tb\\033[1mbold\\033[0m\\r\\n'\n"},
		step{in: "exit 3\n"},
	)
}

// long is an input wider than the terminal.
const long = "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz"

func sqliteSteps() []step {
	return []step{
		{in: "select 6*7;\n"},
		{in: "create table t(a, b);\n"},
		{in: "insert into t values (1, 'one'), (2, 'two');\n"},
		{in: "select * from t;\n"},
		{in: "select * from\nt\nwhere a = 2;\n"},
		{in: "selec 1;\n"},
		{in: ".quit\n"},
	}
}

func bcSteps() []step {
	return []step{
		{in: "6*7\n"},
		{in: "1/0\n"},
		{in: "scale=20; 4*a(1)\n"},
		{in: "for (i = 0; i < 3; i++) i\n"},
		{in: "2^1000\n"},
		{in: "quit\n"},
	}
}

// contSteps is the script of the continuation recordings: incomplete
// inputs (the child asks for more after the whole input), interrupted as
// the agent does, and complete blocks whose later lines the child prompts
// for; "42" is an answer equal to its input.
func contSteps() []step {
	return []step{
		{in: "print(6*7)\n"},
		{in: "for i in range(3): print(i)\n", intr: 300 * time.Millisecond},
		{in: "print('after')\n"},
		{in: "for i in range(3):\n    print(i)\n\n"},
		{in: "for i in range(2):\n    print(i)\n", intr: 300 * time.Millisecond},
		{in: "x = (1,\n2)\n"},
		{in: "x\n"},
		{in: "42\n"},
		{in: "import sys; sys.exit(3)\n"},
	}
}

// statusSteps is the script of the shell recordings whose prompt shows $?.
func statusSteps() []step {
	return []step{
		{in: "(exit 7)\n"},
		{in: "false\n"},
		{in: "echo $((6*7))\n"},
		{in: "true\n"},
		{in: "ls /nonexistent-dir\n"},
		{in: "if true; then\necho yes\nfi\n"},
		{in: "echo a; echo b\n"},
		{in: "if true; then\necho no\n", intr: 300 * time.Millisecond},
		{in: "echo after\n"},
		{in: "printf x\n"},
		{in: "42\n"},
		{in: "exit 3\n"},
	}
}

func scenarios() []scenario {
	const ps1 = "PS1=$ "
	const status1 = "PS1=[$?] $ "
	return []scenario{
		{name: "python-pipe", argv: []string{"python3", "-i", "-q"}, steps: pythonSteps(),
			note: "python3 -i -q on pipes, stderr the same pipe as stdout"},
		{name: "python-tty", argv: []string{"python3", "-q"}, env: []string{"TERM=xterm"}, tty: true, steps: pythonSteps(),
			note: "python3 -q on a terminal, TERM=xterm (readline, bracketed paste)"},
		{name: "sqlite-pipe", argv: []string{"sqlite3", "-interactive"}, steps: sqliteSteps(),
			note: "sqlite3 -interactive on pipes, stderr the same pipe as stdout"},
		{name: "sqlite-tty", argv: []string{"sqlite3"}, env: []string{"TERM=xterm"}, tty: true, steps: sqliteSteps(),
			note: "sqlite3 on a terminal, TERM=xterm"},
		{name: "bash-xterm", argv: []string{"bash", "--norc", "--noprofile", "-i"}, env: []string{"TERM=xterm", ps1}, tty: true, steps: shellSteps(true),
			note: "bash -i with readline on a terminal, TERM=xterm (bracketed paste)"},
		{name: "bash-dumb", argv: []string{"bash", "--norc", "--noprofile", "-i"}, env: []string{"TERM=dumb", ps1}, tty: true, steps: shellSteps(true),
			note: "bash -i with readline on a terminal, TERM=dumb"},
		{name: "ash-tty", argv: []string{"busybox", "sh", "-i"}, env: []string{ps1}, tty: true, steps: shellSteps(true),
			note: "busybox ash on a terminal, TERM unset (it asks for the cursor position)"},
		{name: "ash-pipe", argv: []string{"busybox", "sh", "-i"}, env: []string{ps1}, steps: shellSteps(false),
			note: "busybox ash -i on pipes, stderr the same pipe as stdout"},
		{name: "python-cont", argv: []string{"python3", "-i", "-q"}, steps: contSteps(),
			note: "python3 -i -q on pipes, stderr the same pipe as stdout: incomplete inputs"},
		{name: "python-cont-tty", argv: []string{"python3", "-q"}, env: []string{"TERM=xterm"}, tty: true, steps: contSteps(),
			note: "python3 -q on a terminal, TERM=xterm: incomplete inputs"},
		{name: "dash-status", argv: []string{"dash", "-i"}, env: []string{status1}, steps: statusSteps(),
			note: "dash -i on pipes with a prompt that shows $?, stderr the same pipe as stdout"},
		{name: "ash-status", argv: []string{"busybox", "sh", "-i"}, env: []string{status1}, steps: statusSteps(),
			note: "busybox ash -i on pipes with a prompt that shows $?, stderr the same pipe as stdout"},
		{name: "bash-pipe", argv: []string{"bash", "--norc", "--noprofile", "-i"}, env: []string{status1, "HISTFILE=", "TERM=dumb"},
			steps: statusSteps(), note: "bash -i on pipes with a prompt that shows $?: readline echoes the input to stderr"},
		{name: "bc-pipe", argv: []string{"bc", "-q", "-l"}, steps: bcSteps(),
			note: "bc -q -l on pipes, stderr the same pipe as stdout (bc shows no prompt)"},
		{name: "bc-tty", argv: []string{"bc", "-q", "-l"}, env: []string{"TERM=xterm"}, tty: true, steps: bcSteps(),
			note: "bc -q -l on a terminal (readline, no prompt)"},
	}
}
