//! The layouts the decoder reads, as data: names, offsets and sizes, built
//! from the same constants the decoder's loads use. `tests/schema.rs` lays
//! out the venue's schema facts (`schema/spot_stream_1_0.toml`) end to end
//! and holds this table against them, so a wrong offset constant fails that
//! test; an accessor that loads the wrong constant is caught by the other
//! test there, which reads back messages written from the description.

use crate::spot_stream::{
    best_bid_ask, depth_diff, depth_snapshot, group16, group32, header, level, trades,
};

/// A field of a block: its schema name, offset in the block, and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// The schema's name for it.
    pub name: &'static str,
    /// Bytes from the block's start.
    pub offset: usize,
    /// Its size in bytes.
    pub size: usize,
}

/// A repeating group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Group {
    /// The schema's name for it.
    pub name: &'static str,
    /// Its dimension header: `blockLength` then `numInGroup`.
    pub dimension: &'static [Field],
    /// The length of one entry.
    pub entry_length: usize,
    /// An entry's fields (constants, which take no bytes, are not here).
    pub fields: &'static [Field],
}

/// A message template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Template {
    /// The schema's name for it.
    pub name: &'static str,
    /// Its template id.
    pub id: u16,
    /// Its root block's length.
    pub block_length: usize,
    /// The root block's fields.
    pub fields: &'static [Field],
    /// Its groups, in order.
    pub groups: &'static [Group],
    /// Its var data, in order (each a `varString8`: a `uint8` length).
    pub data: &'static [&'static str],
}

const fn f(name: &'static str, offset: usize, size: usize) -> Field {
    Field { name, offset, size }
}

/// `messageHeader`.
pub const HEADER: &[Field] = &[
    f("blockLength", header::BLOCK_LENGTH, 2),
    f("templateId", header::TEMPLATE_ID, 2),
    f("schemaId", header::SCHEMA_ID, 2),
    f("version", header::VERSION, 2),
];

const GROUP_SIZE: &[Field] = &[
    f("blockLength", group32::BLOCK_LENGTH, 2),
    f("numInGroup", group32::NUM_IN_GROUP, 4),
];

const GROUP_SIZE16: &[Field] = &[
    f("blockLength", group16::BLOCK_LENGTH, 2),
    f("numInGroup", group16::NUM_IN_GROUP, 2),
];

const LEVELS: &[Field] = &[f("price", level::PRICE, 8), f("qty", level::QTY, 8)];

const BOOK: &[Group] = &[
    Group {
        name: "bids",
        dimension: GROUP_SIZE16,
        entry_length: level::ENTRY_LENGTH,
        fields: LEVELS,
    },
    Group {
        name: "asks",
        dimension: GROUP_SIZE16,
        entry_length: level::ENTRY_LENGTH,
        fields: LEVELS,
    },
];

/// Binance's spot stream schema (`spot_stream` 1:0), as [`crate::spot_stream`] reads it.
pub const SPOT_STREAM: &[Template] = &[
    Template {
        name: "TradesStreamEvent",
        id: trades::TEMPLATE_ID,
        block_length: trades::BLOCK_LENGTH,
        fields: &[
            f("eventTime", trades::EVENT_TIME, 8),
            f("transactTime", trades::TRANSACT_TIME, 8),
            f("priceExponent", trades::PRICE_EXPONENT, 1),
            f("qtyExponent", trades::QTY_EXPONENT, 1),
        ],
        groups: &[Group {
            name: "trades",
            dimension: GROUP_SIZE,
            entry_length: trades::ENTRY_LENGTH,
            fields: &[
                f("id", trades::ID, 8),
                f("price", trades::PRICE, 8),
                f("qty", trades::QTY, 8),
                f("isBuyerMaker", trades::IS_BUYER_MAKER, 1),
            ],
        }],
        data: &["symbol"],
    },
    Template {
        name: "BestBidAskStreamEvent",
        id: best_bid_ask::TEMPLATE_ID,
        block_length: best_bid_ask::BLOCK_LENGTH,
        fields: &[
            f("eventTime", best_bid_ask::EVENT_TIME, 8),
            f("bookUpdateId", best_bid_ask::BOOK_UPDATE_ID, 8),
            f("priceExponent", best_bid_ask::PRICE_EXPONENT, 1),
            f("qtyExponent", best_bid_ask::QTY_EXPONENT, 1),
            f("bidPrice", best_bid_ask::BID_PRICE, 8),
            f("bidQty", best_bid_ask::BID_QTY, 8),
            f("askPrice", best_bid_ask::ASK_PRICE, 8),
            f("askQty", best_bid_ask::ASK_QTY, 8),
        ],
        groups: &[],
        data: &["symbol"],
    },
    Template {
        name: "DepthSnapshotStreamEvent",
        id: depth_snapshot::TEMPLATE_ID,
        block_length: depth_snapshot::BLOCK_LENGTH,
        fields: &[
            f("eventTime", depth_snapshot::EVENT_TIME, 8),
            f("bookUpdateId", depth_snapshot::BOOK_UPDATE_ID, 8),
            f("priceExponent", depth_snapshot::PRICE_EXPONENT, 1),
            f("qtyExponent", depth_snapshot::QTY_EXPONENT, 1),
        ],
        groups: BOOK,
        data: &["symbol"],
    },
    Template {
        name: "DepthDiffStreamEvent",
        id: depth_diff::TEMPLATE_ID,
        block_length: depth_diff::BLOCK_LENGTH,
        fields: &[
            f("eventTime", depth_diff::EVENT_TIME, 8),
            f("firstBookUpdateId", depth_diff::FIRST_BOOK_UPDATE_ID, 8),
            f("lastBookUpdateId", depth_diff::LAST_BOOK_UPDATE_ID, 8),
            f("priceExponent", depth_diff::PRICE_EXPONENT, 1),
            f("qtyExponent", depth_diff::QTY_EXPONENT, 1),
        ],
        groups: BOOK,
        data: &["symbol"],
    },
];
