// Starts what the browser tests drive: a fresh PostgreSQL database, the mock LLM
// server, bor itself, and headless Chromium through playwright-core. Everything listens
// on 127.0.0.1 only.

import { spawn, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import { join } from "node:path";
import { chromium } from "playwright-core";

const ROOT = new URL("../../", import.meta.url).pathname;
const BIN_DIR = process.env.BOR_BROWSER_BIN_DIR ?? join(ROOT, "target", "debug");
const CHROMIUM = process.env.BOR_BROWSER_CHROMIUM ?? "/usr/bin/chromium";
const PG_ADMIN_URL =
  process.env.BOR_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const ARTIFACTS = join(ROOT, "target", "browser-artifacts");
const START_TIMEOUT_MS = 30_000;

/** The base environment of bor in these tests (every variable: .env.example). */
const BOR_TEST_ENV = {
  BOR_LLM_RETRY_DELAY: "0.3",
  BOR_SSE_KEEPALIVE: "1",
  BOR_LOG: "info",
  // The pages' tests run as the one local user; the login page's tests set accounts.
  BOR_AUTH: "off",
};

/** A process whose output (stdout and stderr) is kept, line by line, for the tests. */
class Child {
  constructor(name, command, args, env) {
    this.name = name;
    this.lines = [];
    this.process = spawn(command, args, {
      env: { ...process.env, NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.exited = new Promise((resolve) => this.process.once("exit", resolve));
    for (const stream of [this.process.stdout, this.process.stderr]) {
      let partial = "";
      stream.setEncoding("utf8");
      stream.on("data", (text) => {
        const pieces = (partial + text).split("\n");
        partial = pieces.pop();
        for (const line of pieces) this.lines.push(stripAnsi(line));
      });
    }
  }

  /** Resolves with the result of `ready(this)`; stops the process when that fails. */
  async started(ready) {
    try {
      await ready(this);
      return this;
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  /** Waits for a stderr line matching `pattern`; resolves with its match. */
  async waitForLine(pattern, timeoutMs = START_TIMEOUT_MS) {
    let match = null;
    await waitUntil(
      () => {
        if (this.process.exitCode !== null) {
          throw new Error(`${this.name} exited (${this.process.exitCode}):\n${this.log()}`);
        }
        match = this.lines.map((line) => line.match(pattern)).find(Boolean) ?? null;
        return match !== null;
      },
      { timeoutMs, what: `${this.name} to log ${pattern}` },
    );
    return match;
  }

  log() {
    return this.lines.slice(-40).join("\n");
  }

  async stop() {
    if (this.process.exitCode === null && this.process.signalCode === null) {
      this.process.kill("SIGTERM");
    }
    await this.exited;
  }
}

/** A fresh database on the local PostgreSQL, dropped by `drop()`. */
export class TestDatabase {
  constructor() {
    this.name = `bor_browser_${randomBytes(6).toString("hex")}`;
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${this.name}`;
    this.url = url.toString();
    psql(PG_ADMIN_URL, `CREATE DATABASE ${this.name}`);
  }

  /** Runs SQL; returns the rows as arrays of text fields. */
  query(sql) {
    return psql(this.url, sql);
  }

  drop() {
    psql(PG_ADMIN_URL, `DROP DATABASE IF EXISTS ${this.name} WITH (FORCE)`);
  }
}

function psql(url, sql) {
  const output = execFileSync(
    "psql",
    [url, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-A", "-t", "-F", "\t", "-c", sql],
    { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
  );
  return output
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => line.split("\t"));
}

/** The mock LLM server (bor-mock-llm) on a free port. */
export async function startMockLlm() {
  const mock = new Child("bor-mock-llm", join(BIN_DIR, "bor-mock-llm"), [
    "--bind",
    "127.0.0.1:0",
  ]);
  return mock.started(async () => {
    const [, baseUrl] = await mock.waitForLine(/base_url=(http:\/\/127\.0\.0\.1:\d+\/v1)/);
    mock.baseUrl = baseUrl;
  });
}

/**
 * A proxy in front of the mock LLM that keeps the body of every chat request, so that a
 * test sees the messages the model was given (history included). `baseUrl` is where
 * bor should send its LLM requests; `chatRequests` fills as they pass.
 */
export async function recordChatRequests(mock) {
  const upstream = new URL(mock.baseUrl);
  const chatRequests = [];
  const server = createServer((request, response) => {
    const pieces = [];
    request.on("data", (piece) => pieces.push(piece));
    request.on("end", () => {
      const body = Buffer.concat(pieces);
      if (request.url.endsWith("/chat/completions")) chatRequests.push(JSON.parse(body));
      const forwarded = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          path: request.url,
          method: request.method,
          headers: request.headers,
        },
        (answer) => {
          response.writeHead(answer.statusCode, answer.headers);
          answer.pipe(response);
        },
      );
      forwarded.on("error", () => response.destroy());
      // bor going away (a stopped turn) reaches the mock as it would without the proxy.
      response.on("close", () => forwarded.destroy());
      forwarded.end(body);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}${upstream.pathname}`,
    chatRequests,
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** bor on a free port, talking to `mock` and `database`; `env` adds or overrides. */
export async function startBor({ mock, database, env = {} }) {
  const bor = new Child("bor", join(BIN_DIR, "bor"), ["serve"], {
    ...BOR_TEST_ENV,
    BOR_BIND: "127.0.0.1:0",
    BOR_DATABASE_URL: database.url,
    BOR_LLM_BASE_URL: mock.baseUrl,
    ...env,
  });
  return bor.started(async () => {
    const [, port] = await bor.waitForLine(/bor is listening.*port=(\d+)/);
    bor.url = `http://127.0.0.1:${port}/`;
  });
}

/** Runs `bor ARGS` (e.g. `user add NAME`) on `database`, with `input` on stdin; its
 *  output. */
export function runBor(database, args, input = "") {
  return execFileSync(join(BIN_DIR, "bor"), args, {
    input,
    encoding: "utf8",
    env: { PATH: process.env.PATH, BOR_DATABASE_URL: database.url, BOR_LOG: "warn" },
  });
}

/** Headless Chromium from the system (never a downloaded build). Playwright gives each
 *  launch a fresh temporary profile directory (`--user-data-dir`). */
export async function launchBrowser() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Everything one test file needs, started together and stopped together; `borEnv`
 *  adds to or overrides bor's environment (`{mock}` in a value is the mock LLM's base
 *  URL); with `recordChat`, bor's chat requests pass
 *  through `recordChatRequests` and the suite's `chatRequests` holds their bodies. */
export async function startSuite({ borEnv = {}, recordChat = false } = {}) {
  mkdirSync(ARTIFACTS, { recursive: true });
  const database = new TestDatabase();
  const started = [];
  try {
    const mock = await startMockLlm();
    started.push(mock);
    const recorder = recordChat ? await recordChatRequests(mock) : null;
    if (recorder !== null) started.push(recorder);
    const env = Object.fromEntries(
      Object.entries(borEnv).map(([name, value]) => [name, value.replaceAll("{mock}", mock.baseUrl)]),
    );
    const bor = await startBor({ mock: recorder ?? mock, database, env });
    started.push(bor);
    const browser = await launchBrowser();
    return {
      database,
      mock,
      bor,
      browser,
      chatRequests: recorder?.chatRequests ?? null,
      async stop() {
        await browser.close();
        await Promise.all(started.map((child) => child.stop()));
        database.drop();
      },
    };
  } catch (error) {
    await Promise.all(started.map((child) => child.stop()));
    database.drop();
    throw error;
  }
}

/** Polls `check` (sync or async) until it returns something truthy. */
export async function waitUntil(check, { timeoutMs = 10_000, intervalMs = 50, what = "a condition" } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

function stripAnsi(text) {
  return text.replace(/\x1b\[[0-9;]*m/g, "");
}
