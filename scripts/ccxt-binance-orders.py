#!/usr/bin/env python3
"""Judged by a client we did not write: ccxt's `ccxt.pro` binance class
places one order and cancels it through Binance spot's WebSocket API
(`createOrderWs`, `cancelOrderWs`: `order.place` and `order.cancel` on
`/ws-api/v3`, each request signed by ccxt itself: HMAC-SHA256 with a
shared secret, Ed25519 when the secret is a PEM private key) against the
simulator.

The simulator listens on `--port` (TLS, its CA in `--ca`); the key and its
secret come from the environment (TICKWIRE_CCXT_KEY, TICKWIRE_CCXT_SECRET:
throw-away ones the caller made; never printed). Every URL ccxt knows is
pointed at the simulator on loopback, the markets set by hand, and name
resolution refused for any other host, as scripts/independent-clients.py
does (whose helpers this reuses).

Prints what ccxt made of each answer; exits 0 when the order was placed
open at the price and amount asked, then cancelled, nothing raised.
"""

import argparse
import asyncio
import importlib.util
import os
import sys
from pathlib import Path

import ccxt.pro as ccxtpro

spec = importlib.util.spec_from_file_location(
    "independent_clients", Path(__file__).with_name("independent-clients.py")
)
ic = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ic)


async def run(port, ca, price):
    exchange = ccxtpro.binance(
        {
            "apiKey": os.environ["TICKWIRE_CCXT_KEY"],
            "secret": os.environ["TICKWIRE_CCXT_SECRET"],
            "cafile": ca,
            "options": {"defaultType": "spot"},
        }
    )
    exchange.urls = ic.to_loopback(exchange.urls, port)
    # ccxt checks an order's type against the symbol's `orderTypes`, as
    # `exchangeInfo` lists them (the order types the simulator serves).
    info = {"symbol": "BTCUSDT", "orderTypes": ["LIMIT", "LIMIT_MAKER", "MARKET"]}
    exchange.set_markets([ic.spot(exchange, "BTC/USDT", "BTCUSDT", 0.01, 1e-5, info=info)])
    try:
        placed = await exchange.create_order_ws("BTC/USDT", "limit", "buy", 0.001, price)
        print(f"placed: id {placed['id']} status {placed['status']} price {placed['price']} "
              f"amount {placed['amount']} clientOrderId {placed['clientOrderId']}", flush=True)
        assert placed["status"] == "open", placed
        assert placed["price"] == price and placed["amount"] == 0.001, placed
        canceled = await exchange.cancel_order_ws(placed["id"], "BTC/USDT")
        print(f"canceled: id {canceled['id']} status {canceled['status']}", flush=True)
        assert canceled["id"] == placed["id"], canceled
        assert canceled["status"] == "canceled", canceled
    finally:
        await exchange.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--ca", required=True, help="the simulator's CA certificate (PEM)")
    p.add_argument("--price", type=float, default=50000.0, help="a buy price below the book")
    args = p.parse_args()
    ic.refuse_other_hosts()
    asyncio.run(run(args.port, args.ca, args.price))
    print("ccxt-binance-orders: passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
