//! What the bytes in a slot's receive buffer are, by its phase: a
//! fetch's response, the upgrade's handshake, or frames for the handler;
//! then what the handler's callback asked for.

use super::*;

impl<H: Handler> Driver<H> {
    /// Processes the bytes in the receive buffer according to the phase.
    pub(super) fn process(&mut self, index: usize) -> After {
        if self.slots[index].fetch {
            return self.process_fetch(index, false);
        }
        if self.slots[index].phase == Phase::Handshaking {
            match self.process_handshake(index) {
                After::Continue => {}
                other @ (After::End(_) | After::Act) => return other,
            }
        }
        match self.slots[index].phase {
            Phase::Open | Phase::Closing => self.process_frames(index),
            _ => After::Continue,
        }
    }

    /// A fetch's response: once complete, to the handler, then the end.
    pub(super) fn process_fetch(&mut self, index: usize, eof: bool) -> After {
        let slot = &mut self.slots[index];
        if slot.phase != Phase::Handshaking {
            return After::Continue;
        }
        let id = slot.id(index);
        let rx = &mut slot.rx;
        let response = match crate::fetch::parse_response(rx.plaintext(), eof) {
            Ok(Some(r)) => r,
            Ok(None) if rx.no_room_for_record() => {
                // Not complete, and no room left for another TLS record.
                return After::End(Disconnect::Fetch(crate::FetchError::TooLarge));
            }
            Ok(None) => return After::Continue,
            Err(e) => return After::End(Disconnect::Fetch(e)),
        };
        // The body and the padding after it: what follows the body is the
        // rest of this response or ciphertext no longer needed.
        let body = rx.padded(response.body_start, response.body_len);
        let head = ResponseHead {
            status: response.status,
            retry_after: response
                .retry_after
                .map(|s| Duration::from_secs(u64::from(s))),
        };
        self.handler.on_response(id, head, body, response.body_len);
        After::End(Disconnect::Fetched)
    }

    pub(super) fn process_handshake(&mut self, index: usize) -> After {
        let slot = &mut self.slots[index];
        let input = &*slot.rx.plaintext();
        let consumed = match slot.role {
            Role::Client => {
                let (Some(hs), Some(endpoint)) = (slot.client_hs.as_mut(), slot.endpoint.as_ref())
                else {
                    return After::Continue;
                };
                let status = endpoint.with_protocols(|offered| {
                    hs.parse_response(input, offered).map(|s| match s {
                        HandshakeStatus::Partial => None,
                        HandshakeStatus::Complete { consumed, .. } => Some(consumed),
                    })
                });
                match status {
                    Ok(Some(consumed)) => consumed,
                    Ok(None) => return After::Continue,
                    Err(HandshakeError::Status(status)) => {
                        // The header block is complete (the status is read
                        // from it); what came after it is the body's start.
                        let body = input
                            .windows(4)
                            .position(|w| w == b"\r\n\r\n")
                            .map_or(&[][..], |end| &input[end + 4..]);
                        return After::End(Disconnect::Refused {
                            status,
                            body: Excerpt::new(body),
                        });
                    }
                    Err(e) => return After::End(Disconnect::Handshake(e)),
                }
            }
            Role::Server => match slot.server_hs.parse_request(input) {
                Ok(RequestStatus::Partial) => return After::Continue,
                Ok(RequestStatus::Complete { consumed, request }) => {
                    let accept = *request.accept();
                    if let Err(e) = slot
                        .tx
                        .push_handshake(|out| write_response(out, &accept, None))
                    {
                        return After::End(Disconnect::Handshake(e));
                    }
                    consumed
                }
                Err(e) => {
                    let _ = slot.tx.push_handshake(|out| write_rejection(out, e));
                    let _ = self.flush(index);
                    return After::End(Disconnect::Handshake(e));
                }
            },
        };
        self.slots[index].rx.consume(consumed);
        self.opened(index);
        After::Continue
    }

    /// The upgrade is done: the connection is open, its timers start, and
    /// the handler hears of it.
    pub(super) fn opened(&mut self, index: usize) {
        let now = self.now;
        let ping = self.config.ping_interval;
        let stale = self.config.stale_timeout;
        let slot = &mut self.slots[index];
        slot.phase = Phase::Open;
        slot.deadline = None;
        slot.attempt = 0;
        slot.tx.open = true;
        slot.next_ping = ping.map(|p| now + p);
        slot.pong_deadline = None;
        slot.stale_check = stale.map(|s| now + s);
        self.timers_dirty = true;
        let id = slot.id(index);
        let mut conn = Conn {
            id,
            out: &mut slot.tx,
            rng: &mut self.rng,
            reserve: Reserve {
                free: &mut self.free,
                sizes: &self.sizes,
                next_serial: &mut self.next_serial,
                actions: &mut self.actions,
            },
        };
        self.handler.on_open(&mut conn);
        self.after_callback(index);
        self.run_actions();
    }

    /// Decodes and dispatches every complete frame in the receive buffer.
    pub(super) fn process_frames(&mut self, index: usize) -> After {
        let Driver {
            slots,
            sizes,
            free,
            actions,
            next_serial,
            handler,
            rng,
            poll_stamp,
            now,
            config,
            timers_dirty,
            ..
        } = self;
        let slot = &mut slots[index];
        let id = slot.id(index);
        loop {
            // After a failure the close frame is out: what arrives is
            // discarded until the peer closes (no frame comes out).
            let frame = match slot.rx.next_frame() {
                Ok(found) => found,
                Err(e) => {
                    return fail_slot(
                        slot,
                        rng,
                        *now,
                        config,
                        Disconnect::Protocol(e),
                        timers_dirty,
                    );
                }
            };
            let open = slot.phase == Phase::Open;
            let payload = match frame {
                None => return After::Continue,
                Some(Frame::Data(payload)) => payload,
                Some(Frame::Ping(payload)) => {
                    if open && slot.tx.push_frame(OpCode::Pong, payload, rng).is_err() {
                        return After::End(Disconnect::SendBufferFull);
                    }
                    continue;
                }
                Some(Frame::Pong) => {
                    slot.pong_deadline = None;
                    *timers_dirty = true;
                    continue;
                }
                Some(Frame::Close(code)) => {
                    if open {
                        // Echo the code (RFC 6455 5.5.1), then wait for the end.
                        let echo = code.map(|c| (c, ""));
                        if slot.tx.push_close(echo, rng).is_err() {
                            return After::End(Disconnect::SendBufferFull);
                        }
                        slot.reason = Some(Disconnect::Remote { code });
                        slot.tx.open = false;
                        slot.phase = Phase::Closing;
                        slot.clear_timers();
                        slot.deadline = Some(*now + config.close_timeout);
                        *timers_dirty = true;
                    }
                    slot.await_close_frame = false;
                    if slot.role == Role::Server {
                        // The server closes the TCP connection first (RFC 6455 7.1.1).
                        let reason = slot.reason.take().unwrap_or(Disconnect::Remote { code });
                        return After::End(reason);
                    }
                    return After::Continue;
                }
            };
            if open {
                let stamps = Stamps {
                    poll: *poll_stamp,
                    read_start: slot.read_start,
                    read_end: slot.read_end,
                    decrypted: slot.decrypted,
                    // Not read per message (see `Stamps::decoded`).
                    ..Stamps::default()
                };
                let mut conn = Conn {
                    id,
                    out: &mut slot.tx,
                    rng,
                    reserve: Reserve {
                        free,
                        sizes,
                        next_serial,
                        actions,
                    },
                };
                handler.on_message(&mut conn, payload, stamps);
            }
            // The handler may have written into the padding after the payload.
            slot.rx.restore_padding();
            // A handler callback may have asked to close.
            if let Some(request) = slot.tx.close_request.take() {
                begin_close(slot, rng, *now, config, request, timers_dirty);
            }
            // And for actions beyond this connection: carried out now, the
            // frames after this one wait (`on_readable`).
            if actions.pending() {
                return After::Act;
            }
        }
    }

    /// Applies what a callback asked for: a close, paced sends.
    pub(super) fn after_callback(&mut self, index: usize) {
        let now = self.now;
        let slot = &mut self.slots[index];
        if let Some(request) = slot.tx.close_request.take() {
            begin_close(
                slot,
                &mut self.rng,
                now,
                &self.config,
                request,
                &mut self.timers_dirty,
            );
        }
        slot.next_release = slot.tx.release(now);
        self.timers_dirty = true;
        if let Err(reason) = self.flush(index) {
            self.end(index, reason);
        }
    }
}
