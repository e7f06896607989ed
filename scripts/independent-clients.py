#!/usr/bin/env python3
"""Judged by a client we did not write: ccxt's `ccxt.pro` (its async
WebSocket module) keeps order books against the simulated venues.

For each venue given (`--venue NAME=PORT`, NAME as `tickwire-feed sim`
names it), ccxt's own exchange class is pointed at the simulator on
loopback: every URL the class knows (REST and WebSocket) has its scheme
and host replaced by `https://127.0.0.1:PORT` / `wss://127.0.0.1:PORT`, the
path kept, so the venue's real paths reach the simulator and nothing can
reach the internet (name resolution is refused for any other host, too).
The markets are set by hand (`set_markets`), as ccxt would have parsed
them from the venue, so ccxt makes no market-list request the simulator
does not serve. TLS trusts the simulator's CA (`--ca`), and only it.

Then, per venue, `watch_order_book` on both simulated instruments at
once (the second at another depth or channel than ccxt's default where
the simulator serves one: `OTHER_DEPTH`), until each has returned
`--updates` books, while ccxt pings the way it pings that venue (an
application `ping` message, or a WebSocket ping frame), more often than it
would (`keepAlive`), until a pong came back.
Every book returned must have levels on both sides, bids strictly
descending, asks strictly ascending, not crossed, positive amounts, and
prices on the instrument's tick. On Binance, where ccxt builds its book
from a REST snapshot and the diff stream, its book is also set against the
simulator's own: a fresh REST snapshot (update id L) must equal, in its
top levels, the book ccxt held right after applying the diff that holds
L (ends at it on spot; on futures, whose ids jump, L may lie inside it). Any exception ccxt raises (in a call, or in its own callbacks), a
bad book, or no books/pong by the deadline (a generous one: the check
waits on events, never on time) fails the venue. Exit status: 0 when
every venue passed.

Run by scripts/independent-clients.sh, which starts the simulator.
"""

import argparse
import asyncio
import socket
import sys
import time
import traceback

import ccxt
import ccxt.pro as ccxtpro
from aiohttp import WSMsgType
from ccxt.async_support.base.ws.client import Client

# Loopback only. The one address the simulator listens on; the name its
# certificate also carries.
HOST = "127.0.0.1"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def refuse_other_hosts():
    """Name resolution for loopback only: a URL left pointing at a real
    venue fails at once instead of leaving the machine."""
    real = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):
        name = host.decode() if isinstance(host, bytes) else host
        if name not in LOOPBACK:
            raise OSError(f"independent-clients: refusing to resolve {name!r} (loopback only)")
        return real(host, *args, **kwargs)

    socket.getaddrinfo = getaddrinfo


def market(exchange, **fields):
    """A market as ccxt's parser would have made it from the venue's list."""
    m = exchange.safe_market_structure(fields)
    m["lowercaseId"] = m["id"].lower()
    m["active"] = True
    m["margin"] = False
    m["index"] = False
    for k in ("spot", "swap", "future", "option", "contract", "linear", "inverse"):
        if m[k] is None:
            m[k] = False
    return m


def spot(exchange, symbol, id, price_tick, amount_tick, info=None):
    base, quote = symbol.split("/")
    return market(
        exchange,
        id=id,
        symbol=symbol,
        base=base,
        quote=quote,
        baseId=base,
        quoteId=quote,
        type="spot",
        spot=True,
        precision={"price": price_tick, "amount": amount_tick},
        info=info or {},
    )


def perpetual(exchange, symbol, id, price_tick, amount_tick, contract_size, info=None):
    pair, settle = symbol.split(":")
    base, quote = pair.split("/")
    linear = settle == quote
    return market(
        exchange,
        id=id,
        symbol=symbol,
        base=base,
        quote=quote,
        settle=settle,
        baseId=base,
        quoteId=quote,
        settleId=settle,
        type="swap",
        swap=True,
        contract=True,
        linear=linear,
        inverse=not linear,
        contractSize=contract_size,
        precision={"price": price_tick, "amount": amount_tick},
        info=info or {},
    )


# Each simulated venue: ccxt's class, the options that pick the market
# type, and the two instruments the simulator serves (crates/sim
# market.rs, `SimInstrument::pair`: BTC then ETH), each with its price tick
# (the simulator's price decimals) and amount tick.
def venues():
    return {
        "binance-spot": (
            ccxtpro.binance,
            {"defaultType": "spot"},
            lambda x: [
                spot(x, "BTC/USDT", "BTCUSDT", 0.01, 1e-5),
                spot(x, "ETH/USDT", "ETHUSDT", 0.01, 1e-4),
            ],
        ),
        "binance-usdm": (
            ccxtpro.binanceusdm,
            {},
            lambda x: [
                perpetual(x, "BTC/USDT:USDT", "BTCUSDT", 0.1, 1e-3, 1),
                perpetual(x, "ETH/USDT:USDT", "ETHUSDT", 0.01, 1e-3, 1),
            ],
        ),
        "binance-coinm": (
            ccxtpro.binancecoinm,
            {},
            lambda x: [
                perpetual(x, "BTC/USD:BTC", "BTCUSD_PERP", 0.01, 1, 100),
                perpetual(x, "ETH/USD:ETH", "ETHUSD_PERP", 0.01, 1, 10),
            ],
        ),
        "okx": (
            ccxtpro.okx,
            {},
            lambda x: [
                spot(x, "BTC/USDT", "BTC-USDT", 0.01, 1e-5),
                spot(x, "ETH/USDT", "ETH-USDT", 0.01, 1e-4),
            ],
        ),
        "bybit-spot": (
            ccxtpro.bybit,
            {"defaultType": "spot"},
            lambda x: [
                spot(x, "BTC/USDT", "BTCUSDT", 0.01, 1e-5),
                spot(x, "ETH/USDT", "ETHUSDT", 0.01, 1e-4),
            ],
        ),
        "bybit-linear": (
            ccxtpro.bybit,
            {"defaultType": "swap"},
            lambda x: [
                perpetual(x, "BTC/USDT:USDT", "BTCUSDT", 0.1, 1e-3, 1),
                perpetual(x, "ETH/USDT:USDT", "ETHUSDT", 0.01, 1e-3, 1),
            ],
        ),
        "bybit-inverse": (
            ccxtpro.bybit,
            {"defaultType": "swap"},
            lambda x: [
                perpetual(x, "BTC/USD:BTC", "BTCUSD", 0.01, 1, 1),
                perpetual(x, "ETH/USD:ETH", "ETHUSD", 0.01, 1, 1),
            ],
        ),
        "kraken": (
            ccxtpro.kraken,
            {},
            lambda x: [
                spot(x, "BTC/USD", "XXBTZUSD", 0.1, 1e-8, {"wsname": "XBT/USD", "altname": "XBTUSD"}),
                spot(x, "ETH/USD", "XETHZUSD", 0.01, 1e-8, {"wsname": "ETH/USD", "altname": "ETHUSD"}),
            ],
        ),
        "coinbase": (
            ccxtpro.coinbase,
            {},
            lambda x: [
                spot(x, "BTC/USD", "BTC-USD", 0.01, 1e-8),
                spot(x, "ETH/USD", "ETH-USD", 0.01, 1e-8),
            ],
        ),
        "deribit": (
            ccxtpro.deribit,
            {},
            lambda x: [
                perpetual(x, "BTC/USD:BTC", "BTC-PERPETUAL", 0.1, 1, 10),
                perpetual(x, "ETH/USD:ETH", "ETH-PERPETUAL", 0.01, 1, 1),
            ],
        ),
    }


# The second instrument's book at another depth (or channel) than ccxt's
# default, where ccxt offers one the simulator serves: `watch_order_book`'s
# `limit` and `params`. The first instrument keeps ccxt's default.
OTHER_DEPTH = {
    "binance-spot": ("ETH/USDT", 100, {}),  # a 100-level REST snapshot
    "binance-usdm": ("ETH/USDT:USDT", 100, {}),
    "binance-coinm": ("ETH/USD:ETH", 100, {}),
    "okx": ("ETH/USDT", 1, {}),  # bbo-tbt
    "bybit-spot": ("ETH/USDT", 200, {}),  # orderbook.200
    "bybit-linear": ("ETH/USDT:USDT", 1, {}),  # orderbook.1, snapshots only
    "bybit-inverse": ("ETH/USD:ETH", 1000, {}),  # orderbook.1000
    "kraken": ("ETH/USD", 100, {}),
    "deribit": ("ETH/USD:ETH", None, {"interval": "agg2"}),  # book.ETH-PERPETUAL.agg2
}


def to_loopback(urls, port):
    """Every `scheme://host[:port]/path` in `urls` (nested) as
    `scheme://127.0.0.1:PORT/path`."""
    if isinstance(urls, dict):
        return {k: to_loopback(v, port) for k, v in urls.items()}
    if isinstance(urls, list):
        return [to_loopback(v, port) for v in urls]
    if isinstance(urls, str) and "://" in urls:
        scheme, rest = urls.split("://", 1)
        path = rest[rest.find("/"):] if "/" in rest else ""
        return f"{scheme}://{HOST}:{port}{path}"
    return urls


def ponged(client):
    """`client` (a ccxt WebSocket client) got a pong: counted, and its
    exchange's event set."""
    client.tw_pongs = getattr(client, "tw_pongs", 0) + 1
    event = getattr(client, "tw_ponged", None)
    if event is not None:
        event.set()


def count_pong_frames():
    """WebSocket pong frames, on every ccxt client (the venues ccxt pings
    with a frame). Application pongs: see `run_venue`."""
    handle = Client.handle_message

    def handle_message(self, message):
        if message.type == WSMsgType.PONG:
            ponged(self)
        return handle(self, message)

    Client.handle_message = handle_message


def check_book(book, spec, symbol):
    """What every book ccxt hands out must be. Returns the problem, or None."""
    bids, asks = book["bids"], book["asks"]
    if not bids or not asks:
        return f"{symbol}: a side has no levels ({len(bids)} bids, {len(asks)} asks)"
    for side, levels, descending in (("bids", bids, True), ("asks", asks, False)):
        for k, level in enumerate(levels):
            price, amount = level[0], level[1]
            if not amount > 0:
                return f"{symbol}: {side}[{k}] amount {amount}"
            ticks = price / spec["precision"]["price"]
            if abs(ticks - round(ticks)) > 1e-6 * max(1.0, abs(ticks)):
                return f"{symbol}: {side}[{k}] price {price} is off the tick {spec['precision']['price']}"
            if k > 0:
                before = levels[k - 1][0]
                if (descending and not price < before) or (not descending and not price > before):
                    order = "descending" if descending else "ascending"
                    return f"{symbol}: {side} not strictly {order} at {k}: {before} then {price}"
    if not bids[0][0] < asks[0][0]:
        return f"{symbol}: crossed or locked, best bid {bids[0][0]} >= best ask {asks[0][0]}"
    return None


class Failure(Exception):
    pass


# Levels compared with the simulator's own book.
COMPARED = 20


def record_binance_books(exchange):
    """Binance: ccxt builds its book from the REST snapshot and the diff
    stream. Every state it reaches (after each diff it applies) is kept,
    by update id (`nonce`), its top levels only, so that it can be set
    against a REST snapshot of the same update id (`same_as_rest`)."""
    seen = {}  # symbol -> {nonce: (bids, asks)}
    changed = asyncio.Event()
    apply = exchange.handle_order_book_message

    def handle_order_book_message(client, message, orderbook):
        result = apply(client, message, orderbook)
        for symbol, book in exchange.orderbooks.items():
            if book is orderbook:
                states = seen.setdefault(symbol, {})
                states[orderbook["nonce"]] = (
                    [list(level[:2]) for level in orderbook["bids"][:COMPARED]],
                    [list(level[:2]) for level in orderbook["asks"][:COMPARED]],
                )
                if len(states) > 5000:
                    del states[min(states)]
                changed.set()
        return result

    exchange.handle_order_book_message = handle_order_book_message
    return seen, changed


async def same_as_rest(exchange, symbol, seen, changed):
    """The simulator's book (a REST snapshot, `lastUpdateId` L, read between
    two market steps) against ccxt's book once it had applied the diff that
    holds L: the top levels must be equal. On spot L is that diff's last id
    (`u`); on futures it may be any id within the diff's `U`..`u` (its ids
    jump: "How to manage a local order book correctly", USD-M), and the
    diff, whose quantities are absolute, brings a book to the snapshot's
    state either way. Returns L."""
    snapshot = await exchange.fetch_order_book(symbol, 100)
    at = snapshot["nonce"]
    while max(seen.get(symbol, {0: None})) < at:
        changed.clear()
        await changed.wait()
    held = min((n for n in seen[symbol] if n >= at), default=None)
    if held is None:
        raise Failure(f"{symbol}: ccxt's book never held update id {at} (the REST snapshot's)")
    bids, asks = seen[symbol][held]
    want = (
        [list(level[:2]) for level in snapshot["bids"][:COMPARED]],
        [list(level[:2]) for level in snapshot["asks"][:COMPARED]],
    )
    if (bids, asks) != want:
        raise Failure(
            f"{symbol}: ccxt's book at update {at} is not the simulator's:\n"
            f"  ccxt bids {bids[:5]} asks {asks[:5]}\n  rest bids {want[0][:5]} asks {want[1][:5]}"
        )
    return at


async def run_venue(name, port, ca, updates, deadline_s, ping_ms):
    cls, options, markets = venues()[name]
    exchange = cls(
        {
            "cafile": ca,
            "enableRateLimit": True,
            "options": options,
        }
    )
    exchange.urls = to_loopback(exchange.urls, port)
    exchange.set_markets(markets(exchange))
    # Ping sooner than the venue's own keepAlive, and allow many missed
    # pongs: the check waits for a pong, it does not time one.
    exchange.streaming = dict(exchange.streaming, keepAlive=ping_ms, maxPingPongMisses=10_000)
    pong = asyncio.Event()
    make_client = exchange.client

    def client(url):
        c = make_client(url)
        c.tw_ponged = pong
        return c

    exchange.client = client
    app_pong = getattr(exchange, "handle_pong", None)
    if app_pong is not None:

        def handle_pong(client, message):
            ponged(client)
            return app_pong(client, message)

        exchange.handle_pong = handle_pong

    binance = name.startswith("binance-")
    if binance:
        seen, changed = record_binance_books(exchange)
    start = time.monotonic()
    counts = {}
    tops = {}
    matched = {}
    rebridged = set()
    try:

        async def keep(spec):
            symbol = spec["symbol"]
            other, limit, params = OTHER_DEPTH.get(name, (None, None, {}))
            if symbol != other:
                limit, params = None, {}
            counts[symbol] = 0
            while counts[symbol] < updates:
                # A copy: ccxt writes into the params it is given.
                try:
                    book = await exchange.watch_order_book(symbol, limit, dict(params))
                except ccxt.ChecksumError:
                    # ccxt bridges an inverse market's buffered diffs to its
                    # snapshot with spot's rule (pro/binance.py,
                    # fetch_order_book_snapshot: only type 'linear' takes the
                    # futures rule; else U - 1 <= lastUpdateId <= u - 1), so
                    # it refuses a COIN-M snapshot whose lastUpdateId is an
                    # event's last id u, which COIN-M's docs allow ("the first
                    # processed event should have U <= lastUpdateId AND u >=
                    # lastUpdateId") and the simulator sometimes serves. Its
                    # error says to call watchOrderBook again: once, at the
                    # bridge only (before the first book), and said.
                    if name != "binance-coinm" or counts[symbol] > 0 or symbol in rebridged:
                        raise
                    rebridged.add(symbol)
                    continue
                problem = check_book(book, spec, symbol)
                if problem:
                    raise Failure(problem)
                counts[symbol] += 1
                tops[symbol] = (book["bids"][0][:2], book["asks"][0][:2], len(book["bids"]), len(book["asks"]))
            if binance:
                matched[symbol] = await same_as_rest(exchange, symbol, seen, changed)
                # The books go on after the comparison: still sound.
                for _ in range(5):
                    book = await exchange.watch_order_book(symbol, limit, dict(params))
                    problem = check_book(book, spec, symbol)
                    if problem:
                        raise Failure(problem)

        tasks = [keep(spec) for spec in markets(exchange)] + [pong.wait()]
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=deadline_s)
        pongs = sum(getattr(c, "tw_pongs", 0) for c in exchange.clients.values())
        took = time.monotonic() - start
        shown = "; ".join(
            f"{s} bid {b[0]} x {b[1]} ask {a[0]} x {a[1]} ({nb}/{na} levels)"
            for s, (b, a, nb, na) in sorted(tops.items())
        )
        same = "".join(
            f"; {s} equal to the simulator's REST book at update {u} (top {COMPARED} levels)"
            for s, u in sorted(matched.items())
        )
        again = "".join(
            f"; {s} bridged again after ccxt's inverse-market rule refused the first"
            for s in sorted(rebridged)
        )
        return True, f"{name}: ok, {sum(counts.values())} books, {pongs} pongs, {took:.1f} s: {shown}{same}{again}"
    except asyncio.TimeoutError:
        pongs = sum(getattr(c, "tw_pongs", 0) for c in exchange.clients.values())
        return False, f"{name}: FAILED: not done within {deadline_s} s: books {counts}, pongs {pongs}"
    except Failure as e:
        return False, f"{name}: FAILED: bad book: {e}"
    except Exception as e:  # ccxt's own errors: the point of the check
        detail = "".join(traceback.format_exception_only(type(e), e)).strip()
        return False, f"{name}: FAILED: {detail[:2000]}"
    finally:
        await exchange.close()


async def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ca", required=True, help="the simulator's CA certificate (PEM)")
    p.add_argument("--venue", action="append", required=True, metavar="NAME=PORT")
    p.add_argument("--updates", type=int, default=50, help="books per instrument")
    p.add_argument("--deadline", type=float, default=120, help="seconds per venue, at most")
    p.add_argument("--ping-ms", type=int, default=1000, help="ccxt's keepAlive")
    args = p.parse_args()
    refuse_other_hosts()
    count_pong_frames()
    # An exception ccxt raises in a callback of its own (a message handler
    # run by its receive loop) reaches no caller: asyncio would only log
    # it. Here it fails the run.
    stray = []

    def on_stray(loop, context):
        stray.append(context)
        loop.default_exception_handler(context)

    asyncio.get_running_loop().set_exception_handler(on_stray)
    known = venues()
    jobs = []
    for v in args.venue:
        name, _, port = v.partition("=")
        if name not in known:
            sys.exit(f"independent-clients: no ccxt set-up for {name!r} (known: {', '.join(known)})")
        jobs.append(run_venue(name, int(port), args.ca, args.updates, args.deadline, args.ping_ms))
    print(f"ccxt {ccxt.__version__}, {len(jobs)} venues, {args.updates} books per instrument", flush=True)
    results = await asyncio.gather(*jobs)
    for ok, line in results:
        print(line, flush=True)
    passed = sum(1 for ok, _ in results if ok)
    failed = len(results) - passed
    for context in stray:
        print(f"independent-clients: FAILED: an exception in ccxt's own callbacks: {context.get('message')}: "
              f"{context.get('exception')!r}")
    if stray:
        failed += 1
    print(f"independent-clients: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
