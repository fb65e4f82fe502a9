/// The handlers of every resource, made once per server and named by the
/// route table. Each translates HTTP to engine calls and back; none holds a
/// document rule (the engine does).
@available(macOS 14, iOS 17, tvOS 17, *)
struct Handlers: Sendable {
    let server: ServerHandlers
    let session: SessionHandlers
    let databases: DatabaseHandlers
    let documents: DocumentHandlers
    let attachments: AttachmentHandlers
    let bulk: BulkHandlers
    let changes: ChangesHandlers
    let mango: MangoHandlers
    let design: DesignHandlers
    let replication: ReplicationHandlers
    let utils: UtilsHandlers

    init(server couch: CouchServer) {
        server = ServerHandlers(server: couch)
        session = SessionHandlers(server: couch)
        databases = DatabaseHandlers(server: couch)
        documents = DocumentHandlers(server: couch)
        attachments = AttachmentHandlers(server: couch)
        bulk = BulkHandlers(server: couch)
        changes = ChangesHandlers(server: couch)
        mango = MangoHandlers(server: couch)
        design = DesignHandlers(server: couch)
        replication = ReplicationHandlers(server: couch)
        utils = UtilsHandlers(server: couch)
    }
}
