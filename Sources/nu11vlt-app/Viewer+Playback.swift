// SPDX-License-Identifier: GPL-3.0-or-later
import CGtk
import CNu11Gtk
import Foundation
import Nu11Format
import Nu11Media
import Nu11Vault

/// Videos and Live Photo motions played in place (issue 58): decrypted into memory, decoded by
/// the sandboxed helper (`VideoPlayer`), never written to a file.
extension Viewer {
    /// Plays the video (or a Live Photo's motion) in place, or pauses and resumes it.
    func play() {
        if let player {
            if player.paused { player.resume() } else { player.pause() }
            return setPlaying(!player.paused)
        }
        guard let item = current else { return }
        if item.isVideo { return play(item) }
        guard let motion = item.motion else { return }
        let mine = generation
        screen.app.session.run({ vault in try vault.items.summaries([motion]).first }) { [weak self] result in
            guard let self, mine == self.generation else { return }
            guard case .success(let clip?) = result, clip.isVideo else {
                return screen.app.tell("Cannot play “\(item.name)”", "its Live Photo motion is no longer in the vault")
            }
            play(clip)
        }
    }

    /// Decrypts the video into memory (never a file) and starts a `VideoPlayer` on it.
    func play(_ item: ItemSummary) {
        guard item.size <= UInt64(VideoStream.maxInput) else {
            return screen.app.tell("Cannot play “\(item.name)” here", "it is over \(VideoStream.maxInput >> 20) MiB, more than the app plays from memory; export it to play it")
        }
        let mine = generation
        setText(badge, "Starting…")
        setPlaying(true)
        screen.app.session.run({ vault -> [UInt8] in
            var sink = MemorySink(capacity: Int(min(item.size, UInt64(VideoStream.maxInput))))
            _ = try vault.items.export(ItemRef(item.id), to: &sink)
            defer { sink.zero() }
            return sink.bytes
        }) { [weak self] result in
            guard let self, mine == self.generation else { return }
            switch result {
            case .success(let bytes):
                setText(badge, "")
                player = VideoPlayer(video: bytes, maxSide: 1280, show: { [weak self] box in
                    guard let self, mine == self.generation else { return Timings.event("play-frame-for-another-item") }
                    texture = box
                    gtk_picture_set_paintable(op(picture), box.texture)
                }, ended: { [weak self] reason in
                    guard let self, mine == self.generation else { return Timings.event("play-end-for-another-item") }
                    player = nil
                    setPlaying(false)
                    if let reason { screen.app.tell("Cannot play “\(item.name)”", reason) }
                })
            case .failure(let error):
                setText(badge, "")
                setPlaying(false)
                screen.app.tell("Cannot play “\(item.name)”", describe(error))
            }
        }
    }

    /// The Play button says what it does next: "Play", or "Pause" while a video plays.
    func setPlaying(_ playing: Bool) {
        guard let playButton else { return }
        let name = playing ? "Pause" : "Play"
        gtk_button_set_icon_name(typed(playButton), playing ? "media-playback-pause-symbolic" : "media-playback-start-symbolic")
        gtk_widget_set_tooltip_text(playButton, name)
        n11g_set_label(playButton, name)
    }

    func stopVideo() {
        player?.stop()
        player = nil
        setPlaying(false)
    }
}
