import Foundation

/// The seed's voting device: its design document and a question, verbatim.
public enum SeedVoting {
    /// The user's design document, verbatim: one update handler, `addvote`.
    public static let design = #"""
    {
       "_id": "_design/voting",
       "updates": {
           "addvote": "function(doc, req) { var json = JSON.parse(req.body); doc.answers[parseInt(json.answer)].votes.push(json.uid); return [doc, toJSON(doc)]}"
       }
    }
    """#

    /// A question with two answers and no votes.
    public static let question = #"{"question":"Tabs or spaces?","answers":[{"answer":"Tabs","votes":[]},{"answer":"Spaces","votes":[]}]}"#
}
