// SPDX-License-Identifier: GPL-3.0-or-later
import Crypto
import Foundation
import Testing
@testable import Nu11Format

/// Our own age round trips (post-quantum included: age 1.1.1 has none) and the refusals.
@Suite("age: keys, round trips and refusals")
struct AgeFormatTests {
    // The examples of the spec (c2sp.org/age): an identity and the recipient it gives.
    static let specX25519Identity = "AGE-SECRET-KEY-1GFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPYYSJZGFPQ4EGAEX"
    static let specX25519Recipient = "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj"
    static let specPQIdentity = "AGE-SECRET-KEY-PQ-1XX76JRALNLXDMEW0CRK45QMCCH4X06SE84UN3VPM33W6HWDX0H3SK3ZQFR"
    static let specPQRecipient = "age1pq1x34nzsvr0rxjsgdn8zgyhfe8j7ceq5r9rdelkjuh3y235jzxshfg87pzf5zrqtzdxz95paef6caq5aapdmwjjqpjfdyxnzr2zampc3uxy0dg4z2n2gm9su72p0pc3u0jvev55l694v78snxg3yzvcl7yda0eyytqj6a0ec477lnhcy5hzpz4zq3pxanve4cn62gqj3pjy5lqj9c6kyj4v2z8alktn8zh99970x79gjkv7522hv9kfz35zsnxhsx8wwtmu9cy3ftzjgwcp4sshn3llnylnpdsyz5jm72vefv4x5vfwytrefxg4wq3mv42wcrvkj742479zrxzpvp2p3e9fed9f0739vcu80r7ma28qfhnvlv4gfzel9q654dj3zmuvvz893azhxdvs9fxd0r7jzchzcfcs5mkyyjxhw0n2z6dvp9yn9qfdp29h0azxqyjw6v7fhyuzj7zel0uq6j9rd7wgrpz7mf5dnj43jwsgvrc8qcnhy7tu6dkdujuxzkp9xj43xe8h92ktre2a3u3s8mm5mrp9nr9pwkgtz4mdlq9hgn4fps4k57ff6wddn2fy23t47sm20r8km8sd2pcyyafnet8f0dajsrlyjeah4n3mssr6aseevuuskdvq5lzguyvpgwpta742c6698vgutzqgny8usfg0w2he7kq5vyxjd0f9hqg8xk26y9e4th0gezq92q4cpp5p2y9hf5f2cje5l0c3sa3a2qxmm38pxxvhxh99yzmfz0zk7r2s64nnwjhkfgfr3gf8xnmppcgmaykvh5sh6g7vk9790rf8ws0axmr2t7z8aae5fq2029uvcn2ghgt4fu4wgwdc0k0cz52qkvwmuzj8p8k5jgf3xzk5zmrkavjekjrpeq408xz3zxazwkc6tyfmhayrkfpjhwtz5mp8j8guqe43k2q6m2kte03vrw27y3wmqyu5etmt9dnkwcnnpmu9gz9dekfhdevf42ucshphnrk38ra6hx8w5f8q5ru0xdhrjxmwqf6cused7zc5xvq43r0zscjglpwlptpwydhqw64xz7ptjdyeyzpq2zkxtmzg29gzjpvzva4d3l0cenn9xs297wf4y4ukwrunf57xj6pm7nvrkwvtrt8hwcmgv8x7ajw7258ugf9wvkmk4052ekg87tw5vnx8nq2swyzv77v8yqlwsenvamr0zssknwts8rrhfuwj7ykysnq9jxy0uv3kuyt22djszjdtvpz6d0s0kwh8ryynddzud92emeyvvyqktd0jtj7rvvg5gch25v8smlvny3kvn5gagyz475ze2y6q466xqmz2n3hs77lddeqyta2nch5k2u5yacuk9ywnwfdzvyejnucz724hj77hrrmakm7pr3kxsrxq22ejexlud9fy2kdqmkg5yncz7jm5wv2qjk5w5kvcpqsry2yqffh2la52dxfjkjq5rzhjzeyn6dupn0qwtyv7s4lwg3xdarsdlwe2y3tujy480y7z39q259fzx6jhd2j0f5hagqpcpees7hzc2yrk5cy788uk3s7qvp5cpepx24gvws3m2g433exgwppnkjscec8qu4y9z9r7vccexjcjaen42245lmgmxmuavg9alej92322gvvyy2t6267v09ch64y0m53jff0vjj96s0ypk60hr3jw4myd6m5hpn3xjstx7tl2szhpr5qe8jj08ydjc4wy2rch2fhuy3pdfjax5awe9j99ly5hkntzz9fe5zatgjvzdd0kgtxs25njnajyf6ssekp7gelxquusn4pt25czh3scj68kq79wdn5tgm6yvm9nzavrg043x3msnygf8dweknw5jmqd0uvny6ttsn09508k0c55zfnegrm9efhxpfqdkmhh6gjtqmwze9pyyzk3tlhl53k2ykx3qheyty7saeq0d3fzv49zc0k"

    static func plaintext(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) } }

    static func encrypt(_ plain: [UInt8], to recipients: [AgeRecipient], armor: Bool = false) throws -> [UInt8] {
        var source = MemorySource(plain)
        var sink = MemorySink()
        try Age.encrypt(from: &source, to: &sink, recipients: recipients, armor: armor)
        return sink.bytes
    }

    static func decrypt(_ file: [UInt8], with identities: [AgeIdentity]) throws -> [UInt8] {
        var sink = MemorySink()
        try Age.decrypt(from: MemorySource(file), to: &sink, identities: identities)
        return sink.bytes
    }

    @Test("the spec's identities give the spec's recipients, and encode back")
    func specKeys() throws {
        let x = try AgeIdentity(parsing: Self.specX25519Identity)
        #expect(x.recipient?.encoded == Self.specX25519Recipient)
        #expect(x.secretKeyString() == Self.specX25519Identity)
        let pq = try AgeIdentity(parsing: Self.specPQIdentity)
        #expect(pq.recipient?.encoded == Self.specPQRecipient)
        #expect(pq.secretKeyString() == Self.specPQIdentity)
        #expect(try AgeRecipient(parsing: Self.specPQRecipient).isPostQuantum)
        #expect(try !AgeRecipient(parsing: Self.specX25519Recipient).isPostQuantum)
    }

    @Test("post-quantum and X25519 round trips, binary and armored, across chunk boundaries",
          arguments: [0, 1, 65_535, 65_536, 65_537, 200_003])
    func roundTrips(size: Int) throws {
        let plain = Self.plaintext(size)
        for kind in [AgeIdentity.Kind.postQuantum, .x25519] {
            let identity = try AgeIdentity.generate(kind)
            let recipient = try #require(identity.recipient)
            for armor in [false, true] {
                let file = try Self.encrypt(plain, to: [recipient], armor: armor)
                #expect(try Self.decrypt(file, with: [identity]) == plain)
                if armor { #expect(file.starts(with: Array("-----BEGIN AGE ENCRYPTED FILE-----\n".utf8))) }
            }
        }
    }

    @Test("a file to several post-quantum recipients opens with each identity, and not with another")
    func severalRecipients() throws {
        let a = try AgeIdentity.generate(.postQuantum), b = try AgeIdentity.generate(.postQuantum)
        let file = try Self.encrypt(Self.plaintext(1000), to: [try #require(a.recipient), try #require(b.recipient)])
        #expect(try Self.decrypt(file, with: [a]) == Self.plaintext(1000))
        #expect(try Self.decrypt(file, with: [b]) == Self.plaintext(1000))
        let stranger = try AgeIdentity.generate(.postQuantum)
        #expect(AgeFailure.of(Self.failure { _ = try Self.decrypt(file, with: [stranger]) }) == .noMatch)
    }

    static func failure(_ body: () throws -> Void) -> (any Error)? {
        do { try body() } catch { return error }
        return nil
    }

    @Test("post-quantum and classical recipients are not mixed in one file")
    func noMixing() throws {
        let pq = try #require(try AgeIdentity.generate(.postQuantum).recipient)
        let x = try #require(try AgeIdentity.generate(.x25519).recipient)
        let error = Self.failure { _ = try Self.encrypt([1, 2, 3], to: [pq, x]) }
        #expect(AgeFailure.of(error) == .key)
    }

    @Test("malformed recipient strings are refused with one line and a hint", arguments: [
        "age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwz",  // checksum
        "age1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq",        // bad length/checksum
        "Age1zvkyg2lqzraa2lnjvqej32nkuu0ues2s82hzrye869xeexvn73equnujwj",  // mixed case
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI",
        "", "age1pq1", specX25519Identity,
    ])
    func badRecipient(text: String) {
        let error = Self.failure { _ = try AgeRecipient(parsing: text) }
        let typed = error as? Nu11Error
        #expect(typed?.code == .invalidArgument)
        #expect(typed?.remedy == .advice(.ageRecipientFormat))
        #expect(typed.map { !$0.description.contains("\n") } == true)
        // A secret key given as a recipient is never echoed back.
        #expect(typed.map { !$0.description.contains("GFPYYSJZ") } == true)
    }

    @Test("a cut file, a flipped last chunk, trailing bytes: refused, and the last chunk never released")
    func damagedPayloads() throws {
        let identity = try AgeIdentity.generate(.postQuantum)
        let plain = Self.plaintext(150_000)
        let file = try Self.encrypt(plain, to: [try #require(identity.recipient)])
        var flipped = file
        flipped[flipped.count - 5] ^= 0x01
        for (label, bad) in [("cut at a chunk boundary", Array(file.dropLast(150_000 - 131_072 + 16))),
                             ("cut inside the last chunk", Array(file.dropLast(100))),
                             ("flipped last chunk", flipped),
                             ("trailing byte", file + [0])] {
            var sink = MemorySink()
            let error = Self.failure { try Age.decrypt(from: MemorySource(bad), to: &sink, identities: [identity]) }
            #expect(AgeFailure.of(error) == .payload, "\(label): \(String(describing: error))")
            #expect(sink.count <= 131_072, "\(label): the last chunk was released")
        }
    }

    @Test("passphrase round trip; a wrong passphrase does not match; work factors above the cap are refused")
    func passphrase() throws {
        var pass = Array("correct horse".utf8)
        let secret = SecretBytes(consuming: &pass)
        var source = MemorySource(Self.plaintext(5000))
        var sink = MemorySink()
        try Age.encrypt(from: &source, to: &sink, passphrase: secret, workFactor: 10)
        #expect(try Self.decrypt(sink.bytes, with: [.passphrase(secret)]) == Self.plaintext(5000))
        var wrong = Array("wrong horse".utf8)
        let error = Self.failure { _ = try Self.decrypt(sink.bytes, with: [.passphrase(SecretBytes(consuming: &wrong))]) }
        #expect(AgeFailure.of(error) == .noMatch)
        let capped = Self.failure { _ = try Self.decrypt(sink.bytes, with: [.passphrase(secret, maxWorkFactor: 9)]) }
        #expect((capped as? Nu11Error)?.code == .costTooHigh)
        // The passphrase is asked only for a passphrase file.
        var asked = 0
        var out = MemorySink()
        try Age.decrypt(from: MemorySource(sink.bytes), to: &out, identities: []) {
            asked += 1
            return secret
        }
        #expect(asked == 1 && out.bytes == Self.plaintext(5000))
    }
}
