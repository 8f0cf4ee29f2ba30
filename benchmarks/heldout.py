"""Held-out runs for the loop-guard benchmark: shapes the shared corpus does not have.

    .venv/bin/python benchmarks/corpus_eval.py          # scored as their own set

Written by hand, not recorded, and labelled by the corpus's rules before the
guard's thresholds were tuned; they are scored apart from the real trajectories
and never used to choose a threshold. The shapes: commands that time out,
scripts that all succeed and keep reporting that nothing matched, one error
class reached through different launchers and build tools, a Java build failing
through Maven and javac, a rollout that never comes up; and productive runs of
the same kinds (a data investigation that keeps learning, a build that times out
twice and then passes, a rename across many files, a debugging session with
prints).
"""

from __future__ import annotations

from typing import Any

from caretz.eval.replay import Step, Trajectory

KILLED = "[timed out after 120 s; the command and everything it started were killed]"
SOURCE = "benchmarks/heldout.py"


def _step(tool: str, args: dict[str, Any], output: str, failed: bool | None) -> Step:
    return Step(tool=tool, args=args, output=output, failed=failed)


def bash(command: str, output: str, failed: bool | None = False) -> Step:
    return _step("bash", {"command": command}, output, failed)


def read(path: str, text: str) -> Step:
    numbered = "\n".join(f"{n:>4}\t{line}" for n, line in enumerate(text.splitlines(), 1))
    return _step("read", {"path": path}, numbered, False)


def edit(path: str, old: str, new: str) -> Step:
    return _step("edit", {"path": path, "old": old, "new": new}, f"edited {path}", False)


def _run(
    name: str, task: str, steps: list[Step], *, stuck: bool, first: int | None = None,
    kind: str = "productive", note: str = "",
) -> Trajectory:  # fmt: skip
    label: dict[str, Any] = {"stuck": stuck, "kind": kind, "confidence": "high", "note": note}
    if stuck:
        label["first_stuck_step"] = first
    return Trajectory(id=name, task=task, steps=steps, label=label, source=SOURCE)


# ---------------------------------------------------------------- stuck


def timeout_asked_early() -> Trajectory:
    """A production build is killed at its time limit. Asked about early (three
    identical tries), the timeout then keeps coming back through other spellings of
    the build, each killed at a different point of its progress."""

    def killed(modules: int, first: str = "> next build") -> str:
        return (
            f"{first}\n\n   Creating an optimized production build ...\n"
            f"   compiled {modules} modules\n{KILLED}"
        )

    steps = [
        bash("cat package.json", '{\n  "scripts": {"build": "next build", "dev": "next dev"}\n}'),
        bash("npm ci", "added 1214 packages, and audited 1215 packages in 41s\nfound 0 vulnerabilities"),
        bash("npm run build", killed(1180), True),
        bash("npm run build", killed(1180), True),
        bash("npm run build", killed(1180), True),
        bash("free -m", "       total  used  free\nMem:   3936  3120   816\nSwap:     0     0     0"),
        bash("NODE_OPTIONS=--max-old-space-size=2048 npm run build", killed(1212), True),
        bash("npx next build --no-lint", killed(1198, "info  - Linting skipped"), True),
        bash("ls .next", "cache\ntrace"),
        bash("rm -rf .next && npm run build", killed(1177), True),
        bash("npm run build -- --debug", killed(1205, "> next build --debug"), True),
        bash("tail -2 .next/trace",
             '[{"name":"webpack-compilation","duration":118302}]\n'
             '[{"name":"webpack-compilation","duration":119870}]'),
        bash("NEXT_TELEMETRY_DISABLED=1 npm run build", killed(1190), True),
        bash("yarn build", killed(1184, "yarn run v1.22.19\n$ next build"), True),
        bash("npm run build", killed(1183), True),
        bash("npm run build --workspaces=false", killed(1201), True),
        bash("npx next build", killed(1196), True),
    ]  # fmt: skip
    return _run("held-timeout-asked-early", "start the app in production mode and make /health answer",
                steps, stuck=True, first=6, kind="same-failure-repeat",
                note="the build is killed at 120 s every time; from 6 on it only re-spells the build")  # fmt: skip


def flat_successful_scripts() -> Trajectory:
    """Every script exits 0 and reports, each in its own words, that nothing matched."""
    dates = ["2026-11-28", "2026-11-29", "2026-11-30", "2026-12-01"]
    steps = [
        bash("ls scripts", "export_report.py\nquery_orders.py\nreconcile.py"),
        read("scripts/export_report.py",
             "import db\n\ndef main(day):\n    rows = db.orders(day=day, status='settled')\n"
             "    write_csv(rows)\n"),
        bash(f"python scripts/query_orders.py --day {dates[0]}",
             f"query ok: 0 rows matched (orders, day={dates[0]}) in 0.21s"),
        bash(f"python scripts/query_orders.py --day {dates[1]} --status settled",
             f"query ok: 0 rows matched (orders, day={dates[1]}, status=settled) in 0.19s"),
        bash("psql -c \"select count(*) from orders where status = 'settled'\"",
             " count \n-------\n     0\n(1 row)"),
        bash(f"python scripts/reconcile.py --since {dates[0]}",
             f"reconcile: 0 rows matched since {dates[0]}; nothing to do (0.4s)"),
        bash(f"python scripts/query_orders.py --day {dates[2]}",
             f"query ok: 0 rows matched (orders, day={dates[2]}) in 0.23s"),
        bash("psql -c \"select count(*) from orders where day >= '2026-11-28'\"",
             " count \n-------\n     0\n(1 row)"),
        bash(f"python scripts/export_report.py --day {dates[3]} --dry-run",
             f"dry run: 0 rows matched for {dates[3]}, report would be empty"),
        bash(f"python scripts/query_orders.py --day {dates[3]} --status pending",
             f"query ok: 0 rows matched (orders, day={dates[3]}, status=pending) in 0.2s"),
        bash("python scripts/reconcile.py --since 2026-11-01",
             "reconcile: 0 rows matched since 2026-11-01; nothing to do (0.5s)"),
        bash("psql -c \"select count(*) from orders where status = 'pending'\"",
             " count \n-------\n     0\n(1 row)"),
        bash("python scripts/query_orders.py --day 2026-11-27 --status settled",
             "query ok: 0 rows matched (orders, day=2026-11-27, status=settled) in 0.2s"),
        bash("python scripts/export_report.py --day 2026-11-27 --dry-run",
             "dry run: 0 rows matched for 2026-11-27, report would be empty"),
        bash("psql -c \"select count(*) from orders where day = '2026-11-27'\"",
             " count \n-------\n     0\n(1 row)"),
        bash("python scripts/query_orders.py --day 2026-11-26",
             "query ok: 0 rows matched (orders, day=2026-11-26) in 0.22s"),
        bash("python scripts/reconcile.py --since 2026-10-01",
             "reconcile: 0 rows matched since 2026-10-01; nothing to do (0.6s)"),
        bash("python scripts/query_orders.py --day 2026-11-25 --status settled",
             "query ok: 0 rows matched (orders, day=2026-11-25, status=settled) in 0.2s"),
        bash("psql -c \"select count(*) from orders where day = '2026-11-25'\"",
             " count \n-------\n     0\n(1 row)"),
        bash("python scripts/export_report.py --day 2026-11-25 --dry-run",
             "dry run: 0 rows matched for 2026-11-25, report would be empty"),
        bash("python scripts/query_orders.py --day 2026-11-24",
             "query ok: 0 rows matched (orders, day=2026-11-24) in 0.2s"),
        bash("python scripts/reconcile.py --since 2026-09-01",
             "reconcile: 0 rows matched since 2026-09-01; nothing to do (0.6s)"),
    ]  # fmt: skip
    return _run("held-flat-successful-scripts", "find out why the nightly settlement report is empty",
                steps, stuck=True, first=6, kind="no-progress exploration",
                note="the orders table is empty for every day; from 6 on each query only asks again")  # fmt: skip


def same_error_class_through_launchers() -> Trajectory:
    """One import error, reached through different launchers, module paths and tools."""

    def missing(module: str, launcher: str) -> str:
        return (
            "Traceback (most recent call last):\n"
            f'  File "/srv/app/{launcher}", line 8, in <module>\n'
            f"    import {module}\n"
            f"ModuleNotFoundError: No module named '{module}'"
        )

    steps = [
        bash("ls", "app\nmanage.py\nrequirements.txt\nsrc\nwsgi.py"),
        bash("python manage.py check", missing("app.settings", "manage.py"), True),
        read("manage.py", "import os\nos.environ.setdefault('DJANGO_SETTINGS_MODULE', 'app.settings')"),
        bash("PYTHONPATH=src python manage.py check", missing("app.settings", "manage.py"), True),
        bash("ls src", "app"),
        bash("cd src && python -c 'import app.settings'", missing("app.settings", "<string>"), True),
        bash("gunicorn wsgi:application --check-config", missing("app", "wsgi.py"), True),
        bash("pip install -e .", "Obtaining file:///srv/app\nSuccessfully installed app-0.0.0"),
        bash("python -m app.settings", "/usr/bin/python: Error while finding module specification "
             "for 'app.settings' (ModuleNotFoundError: No module named 'app')", True),
        bash("DJANGO_SETTINGS_MODULE=src.app.settings python manage.py check",
             missing("src.app", "manage.py"), True),
        bash("pytest -q", "ImportError while loading conftest '/srv/app/conftest.py'.\n"
             "conftest.py:3: in <module>\n    import app.settings\n"
             "E   ModuleNotFoundError: No module named 'app.settings'", True),
        bash("ls src/app", "__pycache__\nsettings_base.py\nurls.py"),
        bash("PYTHONPATH=. python -c 'import src.app.settings'", missing("src.app.settings", "<string>"), True),
        bash("python -c 'import sys; print(sys.path)'", "['', '/usr/lib/python311.zip', '/usr/lib/python3.11']"),
        bash("uvicorn app.asgi:application", "ERROR:    Error loading ASGI app. Could not import module "
             "\"app.asgi\".", True),
        bash("PYTHONPATH=src:. python manage.py check", missing("app.settings", "manage.py"), True),
        bash("python3.11 manage.py check", missing("app.settings", "manage.py"), True),
        bash("cd src && python ../manage.py check", missing("app.settings", "manage.py"), True),
    ]  # fmt: skip
    return _run("held-same-error-class-launchers", "get the django app to start",
                steps, stuck=True, first=5, kind="same-failure-repeat",
                note="settings.py does not exist (only settings_base.py); every launcher hits it")  # fmt: skip


def java_cannot_find_symbol() -> Trajectory:
    """A Java build failing on one missing symbol through Maven, Gradle and javac."""

    def mvn(line: int) -> str:
        return (
            "[INFO] Compiling 42 source files to /work/target/classes\n"
            f"[ERROR] /work/src/main/java/com/acme/billing/InvoiceService.java:[{line},17] "
            "cannot find symbol\n  symbol:   class TaxRules\n  location: package com.acme.tax\n"
            "[INFO] BUILD FAILURE"
        )

    steps = [
        bash("mvn -q compile", mvn(14), True),
        read("src/main/java/com/acme/billing/InvoiceService.java",
             "package com.acme.billing;\n\nimport com.acme.tax.TaxRules;\n"),
        bash("ls src/main/java/com/acme/tax", "TaxRule.java\nTaxTable.java"),
        bash("mvn clean compile", mvn(14), True),
        bash("mvn -U compile", mvn(14), True),
        bash("grep -rn 'class TaxRules' src", "", True),
        bash("mvn -o compile -DskipTests", mvn(14), True),
        bash("javac -d /tmp/out -cp target/classes src/main/java/com/acme/billing/InvoiceService.java",
             "src/main/java/com/acme/billing/InvoiceService.java:3: error: cannot find symbol\n"
             "import com.acme.tax.TaxRules;\n                   ^\n  symbol:   class TaxRules\n"
             "  location: package com.acme.tax\n1 error", True),
        bash("cat pom.xml | grep -A3 '<dependency>'",
             "    <dependency>\n      <groupId>com.acme</groupId>\n      <artifactId>tax</artifactId>"),
        bash("mvn dependency:tree | grep tax", "[INFO] +- com.acme:tax:jar:2.3.1:compile"),
        bash("mvn compile -pl billing -am", mvn(14), True),
        bash("./gradlew compileJava",
             "> Task :compileJava FAILED\n/work/src/main/java/com/acme/billing/InvoiceService.java:3: "
             "error: cannot find symbol\nimport com.acme.tax.TaxRules;\nBUILD FAILED in 3s", True),
        bash("mvn -X compile 2>&1 | tail -5", mvn(14), True),
        bash("rm -rf ~/.m2/repository/com/acme && mvn compile", mvn(14), True),
    ]  # fmt: skip
    return _run("held-java-cannot-find-symbol", "fix the billing module's build",
                steps, stuck=True, first=4, kind="same-failure-repeat",
                note="the class is TaxRule, not TaxRules; from 4 on the agent only rebuilds differently")  # fmt: skip


def rollout_that_never_comes_up() -> Trajectory:
    """Waiting on a deployment whose pod crash-loops; only restart counts change."""
    steps = [
        bash("kubectl apply -f k8s/", "deployment.apps/web configured\nservice/web unchanged"),
    ]
    for n in range(1, 12):
        steps.append(bash("kubectl rollout status deploy/web --timeout=30s",
                          'Waiting for deployment "web" rollout to finish: 0 of 3 updated replicas '
                          "are available...\nerror: timed out waiting for the condition", True))  # fmt: skip
        steps.append(bash("kubectl get pods -l app=web",
                          "NAME                   READY   STATUS             RESTARTS\n"
                          f"web-5d8c7b9f4-x2kq9   0/1     CrashLoopBackOff   {n + 2}"))  # fmt: skip
    return _run("held-rollout-never-up", "deploy the new web image and make sure it is running",
                steps, stuck=True, first=5, kind="identical-call-repeat",
                note="the pod crash-loops; the agent waits on the rollout instead of reading its logs")  # fmt: skip


def service_never_started() -> Trajectory:
    """The database never runs; every client says so in its own words."""
    steps = [
        read("config/settings.toml", '[database]\nurl = "postgresql://app@localhost:5432/app"'),
        bash("python -m app.migrate", "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) "
             'connection to server at "localhost" (127.0.0.1), port 5432 failed: Connection refused',
             True),
        bash("psql -h localhost -U app -c 'select 1'", 'psql: error: connection to server at '
             '"localhost" (127.0.0.1), port 5432 failed: Connection refused', True),
        bash("pg_isready -h localhost", "localhost:5432 - no response", True),
        bash("curl -s localhost:5432", "curl: (7) Failed to connect to localhost port 5432 after 0 ms: "
             "Couldn't connect to server", True),
        bash("python -c 'import psycopg2; psycopg2.connect(\"dbname=app user=app host=127.0.0.1\")'",
             "psycopg2.OperationalError: could not connect to server: Connection refused\n"
             "\tIs the server running on host \"127.0.0.1\" and accepting TCP/IP connections on port 5432?",
             True),
        bash("nc -zv localhost 5432", "nc: connect to localhost port 5432 (tcp) failed: Connection refused", True),
        bash("env | grep -i pg", "PGUSER=app"),
        bash("PGHOST=127.0.0.1 python -m app.migrate", "sqlalchemy.exc.OperationalError: "
             '(psycopg2.OperationalError) connection to server at "127.0.0.1", port 5432 failed: '
             "Connection refused", True),
        bash("python -m app.migrate --url postgresql://app@127.0.0.1/app",
             "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) could not connect to "
             "server: Connection refused", True),
        bash("telnet localhost 5432", "Trying 127.0.0.1...\ntelnet: Unable to connect to remote host: "
             "Connection refused", True),
        bash("psql postgresql://app@127.0.0.1:5432/app -c 'select 1'",
             'psql: error: connection to server at "127.0.0.1", port 5432 failed: Connection refused',
             True),
        bash("python -m app.migrate --retries 5", "retry 1/5 ... retry 5/5\nsqlalchemy.exc."
             "OperationalError: connection to server failed: Connection refused", True),
        bash("ss -ltn | grep 5432", "", True),
        bash("DATABASE_URL=postgresql://app@localhost/app python -m app.migrate",
             "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server at "
             '"localhost" (::1), port 5432 failed: Connection refused', True),
        bash("pg_isready", "/var/run/postgresql:5432 - no response", True),
    ]  # fmt: skip
    return _run("held-service-never-started", "run the database migrations", steps, stuck=True,
                first=4, kind="same-failure-repeat",
                note="postgres is not running; from 4 on each client only confirms it")  # fmt: skip


# ---------------------------------------------------------------- productive


def data_investigation() -> Trajectory:
    """Queries that keep learning something: counts, then the culprit, then a fix."""
    steps = [
        bash("psql -c 'select count(*) from orders'", " count \n-------\n 18342\n(1 row)"),
        bash("psql -c 'select status, count(*) from orders group by 1'",
             "  status  | count \n----------+-------\n paid     | 17012\n refunded |  1330\n(2 rows)"),
        read("scripts/export_report.py", "rows = db.orders(day=day, status='settled')\n"),
        bash("grep -rn settled scripts src", "scripts/export_report.py:4: status='settled'\n"
             "src/models.py:88:    # 'settled' was renamed to 'paid' in migration 0042"),
        read("src/models.py", "class Order:\n    STATUSES = ('paid', 'refunded')\n"),
        bash("ls migrations | tail -3", "0041_index_day.py\n0042_rename_settled.py\n0043_refunds.py"),
        read("migrations/0042_rename_settled.py", "UPDATE orders SET status='paid' WHERE status='settled'"),
        edit("scripts/export_report.py", "status='settled'", "status='paid'"),
        bash("python scripts/export_report.py --day 2026-11-30 --dry-run",
             "dry run: 611 rows matched for 2026-11-30, report would have 611 lines"),
        bash("python scripts/export_report.py --day 2026-11-29 --dry-run",
             "dry run: 587 rows matched for 2026-11-29, report would have 587 lines"),
        bash("grep -rn \"'settled'\" src scripts tests", "tests/test_export.py:12:    make_order(status='settled')"),
        edit("tests/test_export.py", "status='settled'", "status='paid'"),
        bash("pytest -q tests/test_export.py", "....\n4 passed in 0.61s"),
        bash("git diff --stat", " scripts/export_report.py | 2 +-\n tests/test_export.py     | 2 +-"),
    ]  # fmt: skip
    return _run("held-productive-data-investigation", "find out why the nightly settlement report is empty",
                steps, stuck=False)  # fmt: skip


def build_times_out_then_passes() -> Trajectory:
    steps = [
        bash("npm run build", f"> next build\n\n   Creating an optimized production build ...\n{KILLED}", True),
        bash("cat next.config.js", "module.exports = { output: 'standalone' }"),
        bash("npm run build", f"> next build\n\n   Creating an optimized production build ...\n{KILLED}", True),
        bash("ls -la pages | wc -l", "212"),
        bash("grep -rln 'getStaticPaths' pages | head", "pages/docs/[...slug].js\npages/blog/[id].js"),
        read("pages/docs/[...slug].js", "export async function getStaticPaths() {\n"
             "  const all = await listAllDocs()  // 48,000 pages\n  return { paths: all, fallback: false }\n}"),
        edit("pages/docs/[...slug].js", "return { paths: all, fallback: false }",
             "return { paths: all.slice(0, 200), fallback: 'blocking' }"),
        bash("timeout 600 npm run build", "> next build\n\n   Creating an optimized production build ...\n"
             " ✓ Compiled successfully\n ✓ Generating static pages (412/412)\nRoute (pages) Size"),
        bash("npm start & sleep 5; curl -s localhost:3000/health", '{"status":"ok"}'),
        bash("npm test -- --watchAll=false", "Tests: 38 passed, 38 total\nTime: 7.2 s"),
    ]  # fmt: skip
    return _run("held-productive-build-timeout", "start the app in production mode and make /health answer",
                steps, stuck=False)  # fmt: skip


def rename_across_files() -> Trajectory:
    files = [f"src/billing/{name}.py" for name in (
        "invoice", "ledger", "tax", "refund", "export", "discount", "currency", "payout",
        "statement", "reminder", "dunning", "credit", "webhook", "audit", "report",
    )]  # fmt: skip
    steps = [bash("grep -rl 'compute_total(' src", "\n".join(files))]
    for n, path in enumerate(files):
        steps.append(edit(path, "compute_total(", "invoice_total("))
        if n % 5 == 4:
            steps.append(bash("python -m compileall -q src/billing", ""))
    steps.append(bash("grep -rn 'compute_total(' src", "", True))
    steps.append(bash("pytest -q tests/billing", "........................\n24 passed in 2.10s"))
    return _run("held-productive-rename", "rename compute_total to invoice_total everywhere",
                steps, stuck=False)  # fmt: skip


def debugging_with_prints() -> Trajectory:
    steps = [
        bash("pytest -q tests/test_sync.py", "F\nE   AssertionError: expected 12 items, got 9\n1 failed in 0.4s", True),
        read("src/sync.py", "def sync(a, b):\n    for item in a:\n        if item.id not in b:\n            b.add(item)\n"),
        edit("src/sync.py", "        if item.id not in b:", "        print('check', item.id, item.id in b)\n        if item.id not in b:"),
        bash("pytest -q -s tests/test_sync.py", "check 1 False\ncheck 2 False\ncheck 3 True\ncheck 3 True\n"
             "E   AssertionError: expected 12 items, got 9", True),
        read("src/store.py", "class Store:\n    def __contains__(self, key):\n        return key in self._ids\n"),
        edit("src/store.py", "        return key in self._ids", "        print('contains', key, sorted(self._ids)[:5])\n        return key in self._ids"),
        bash("pytest -q -s tests/test_sync.py", "check 1 False\ncontains 3 [1, 2, 3]\ncheck 3 True\n"
             "E   AssertionError: expected 12 items, got 9", True),
        read("src/store.py", "    def add(self, item):\n        self._ids.add(item.id % 10)\n"),
        edit("src/store.py", "self._ids.add(item.id % 10)", "self._ids.add(item.id)"),
        bash("pytest -q -s tests/test_sync.py", "check 1 False\ncheck 13 False\n.\n1 passed in 0.3s"),
        edit("src/sync.py", "        print('check', item.id, item.id in b)\n", ""),
        edit("src/store.py", "        print('contains', key, sorted(self._ids)[:5])\n", ""),
        bash("pytest -q", "........................................\n40 passed in 3.2s"),
    ]  # fmt: skip
    return _run("held-productive-debug-prints", "fix the failing sync test", steps, stuck=False)


def server_setup() -> Trajectory:
    """A terminal task: most commands change the machine and print nothing."""
    steps = [
        bash("apt-get install -y nginx", "Setting up nginx (1.22.1-9) ...\nProcessing triggers for man-db"),
        bash("mkdir -p /var/www/site", ""),
        bash("cp -r /task/site/* /var/www/site/", ""),
        bash("chown -R www-data:www-data /var/www/site", ""),
        _step("write", {"path": "/etc/nginx/sites-available/site",
                        "content": "server { listen 8080; root /var/www/site; }"},
              "wrote /etc/nginx/sites-available/site", False),
        bash("ln -s /etc/nginx/sites-available/site /etc/nginx/sites-enabled/site", ""),
        bash("rm /etc/nginx/sites-enabled/default", ""),
        bash("nginx -t", "nginx: configuration file /etc/nginx/nginx.conf test is successful"),
        bash("service nginx restart", ""),
        bash("curl -s -o /dev/null -w '%{http_code}' localhost:8080", "200"),
        bash("chmod 640 /var/www/site/.htpasswd", ""),
        bash("touch /var/log/nginx/site.access.log", ""),
        bash("service nginx reload", ""),
        bash("curl -s localhost:8080 | head -3", "<!doctype html>\n<html lang=en>\n<title>Site</title>"),
        bash("ls -la /var/www/site", "index.html\nstyle.css\n.htpasswd"),
    ]  # fmt: skip
    return _run("held-productive-server-setup", "serve /task/site with nginx on port 8080",
                steps, stuck=False)  # fmt: skip


def exploring_a_new_codebase() -> Trajectory:
    names = ["router", "handlers", "auth", "session", "cache", "models", "views", "forms",
             "signals", "middleware", "storage", "tasks", "utils", "errors", "settings"]  # fmt: skip
    steps = [bash("ls src/app", "\n".join(f"{name}.py" for name in names))]
    for n, name in enumerate(names):
        body = f"class {name.title()}Component:\n    def handle_{name}(self, request):\n"
        body += f"        return dispatch_{name}(request, level={n})\n"
        steps.append(read(f"src/app/{name}.py", body))
        if n % 4 == 3:
            steps.append(
                bash(f"grep -rn 'dispatch_{name}' src", f"src/app/{name}.py:3: dispatch_{name}")
            )
    steps.append(edit("src/app/session.py", "level=3", "level=4"))
    steps.append(bash("pytest -q tests/test_session.py", "...\n3 passed in 0.2s"))
    return _run("held-productive-exploration", "find where sessions are dispatched and raise their level",
                steps, stuck=False)  # fmt: skip


HELDOUT = [
    timeout_asked_early,
    flat_successful_scripts,
    same_error_class_through_launchers,
    java_cannot_find_symbol,
    rollout_that_never_comes_up,
    service_never_started,
    data_investigation,
    build_times_out_then_passes,
    rename_across_files,
    debugging_with_prints,
    server_setup,
    exploring_a_new_codebase,
]


def heldout_trajectories() -> list[Trajectory]:
    return [make() for make in HELDOUT]
