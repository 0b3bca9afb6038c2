// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import Nu11Format

/// An iPhone "Live Photo" leaves a camera roll as two files with one name: the still
/// (`IMG_1234.HEIC` or `.JPG`) and its motion, a clip of a few seconds (`IMG_1234.MOV`).
/// Imported together, they stay two items (each exports, backs up and restores as the file
/// it was), and the still's sealed metadata names its motion (`"motion"`, docs/FORMAT.md
/// §4.3): a gallery shows the pair as one item, and the app plays the motion from the still.
///
/// A pair is the only still and the only motion of one stem (case aside) in one folder,
/// imported in the same command; the motion must then really be a video of at most
/// `maxMotionSeconds` and the still really an image, or the two stay apart.
public enum LivePhotos {
    /// iPhone motions are about 3 s; a longer clip with a photo's name is a video of its own.
    public static let maxMotionSeconds = 10.0
    static let stillExtensions: Set<String> = ["heic", "heif", "jpg", "jpeg"]
    static let motionExtensions: Set<String> = ["mov", "mp4"]

    /// The pairs among `paths`: each still's path → its motion's path.
    public static func pairs(_ paths: [String]) -> [String: String] {
        var stills: [String: [String]] = [:], motions: [String: [String]] = [:]
        for path in paths {
            // String work only: a URL would stat each path and read the working folder.
            let (stem, found) = PathName.splitExtension(path)
            let ext = found.lowercased()
            guard stillExtensions.contains(ext) || motionExtensions.contains(ext) else { continue }
            let key = stem.lowercased()
            if stillExtensions.contains(ext) { stills[key, default: []].append(path) }
            if motionExtensions.contains(ext) { motions[key, default: []].append(path) }
        }
        var out: [String: String] = [:]
        for (key, still) in stills where still.count == 1 {
            if let motion = motions[key], motion.count == 1 { out[still[0]] = motion[0] }
        }
        return out
    }

    /// `paths` with each pair's motion just before its still (the still's metadata names the
    /// motion's ID, so the motion is staged first); everything else keeps its place.
    public static func ordered(_ paths: [String], pairs: [String: String]) -> [String] {
        let motions = Set(pairs.values)
        var out: [String] = []
        out.reserveCapacity(paths.count)
        for path in paths where !motions.contains(path) {
            if let motion = pairs[path] { out.append(motion) }
            out.append(path)
        }
        return out
    }

    /// Whether a staged item may be a still's motion.
    static func isMotion(_ meta: ItemMetadata) -> Bool {
        meta.type.hasPrefix("video/") && (meta.duration.map { $0 > 0 && $0 <= maxMotionSeconds } ?? false)
    }
}
