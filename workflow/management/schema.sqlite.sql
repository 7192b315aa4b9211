PRAGMA foreign_keys=OFF;
BEGIN;
CREATE TABLE "django_migrations" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "app" varchar(255) NOT NULL, "name" varchar(255) NOT NULL, "applied" datetime NOT NULL);
INSERT INTO "django_migrations" VALUES(1,'contenttypes','0001_initial',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(2,'auth','0001_initial',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(3,'admin','0001_initial',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(4,'admin','0002_logentry_remove_auto_add',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(5,'admin','0003_logentry_add_action_flag_choices',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(6,'contenttypes','0002_remove_content_type_name',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(7,'auth','0002_alter_permission_name_max_length',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(8,'auth','0003_alter_user_email_max_length',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(9,'auth','0004_alter_user_username_opts',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(10,'auth','0005_alter_user_last_login_null',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(11,'auth','0006_require_contenttypes_0002',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(12,'auth','0007_alter_validators_add_error_messages',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(13,'auth','0008_alter_user_username_max_length',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(14,'auth','0009_alter_user_last_name_max_length',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(15,'auth','0010_alter_group_name_max_length',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(16,'auth','0011_update_proxy_permissions',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(17,'auth','0012_alter_user_first_name_max_length',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(18,'oauth2_provider','0001_initial',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(19,'oauth2_provider','0002_auto_20190406_1805',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(20,'oauth2_provider','0003_auto_20201211_1314',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(21,'oauth2_provider','0004_auto_20200902_2022',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(22,'oauth2_provider','0005_auto_20211222_2352',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(23,'oauth2_provider','0006_alter_application_client_secret',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(24,'oauth2_provider','0007_application_post_logout_redirect_uris',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(25,'oauth2_provider','0008_alter_accesstoken_token',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(26,'oauth2_provider','0009_add_hash_client_secret',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(27,'oauth2_provider','0010_application_allowed_origins',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(28,'oauth2_provider','0011_refreshtoken_token_family',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(29,'oauth2_provider','0012_add_token_checksum',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(30,'oauth2_provider','0013_alter_application_authorization_grant_type_device',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(31,'oauth2_provider','0014_alter_help_text',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(32,'oauth2_provider','0015_refreshtoken_token_checksum',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(33,'oauth2_provider','0016_alter_devicegrant_scope',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(34,'oauth2_provider','0017_application_dcr_created',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(35,'oauth2_provider','0018_resource_indicators',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(36,'oauth2_provider','0019_application_registration_source',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(37,'oauth2_provider','0020_cimd_application_fields',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(38,'oauth2_provider','0021_translatable_field_labels',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(39,'oauth2_provider','0022_refreshtoken_token_family_index',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(40,'records','0001_initial',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(41,'records','0002_triggers',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(42,'records','0003_clarification_review',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(43,'records','0004_membership_and_tokens',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(44,'records','0005_counter_delete_triggers',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(45,'records','0006_search_index_truncate',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(46,'records','0007_audit_action_index',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(47,'records','0008_name_change',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(48,'records','0009_dry_run_counters',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(49,'records','0010_record_embedding',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(50,'records','0011_collection_count',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(51,'records','0012_search_pending_list',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(52,'records','0013_audit_credential',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(53,'records','0014_workspace_feed_key',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(54,'records','0015_audit_entity_index',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(55,'sessions','0001_initial',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(56,'workflow','0001_initial',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(57,'workflow','0002_agendas',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(58,'workflow','0003_agenda_item_earlier',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(59,'workflow','0004_prepared_action_stale_reason',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(60,'workflow','0005_read_marks',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(61,'workflow','0006_review_ticket_client_confirmation',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(62,'workflow','0007_prepared_action_dismissal',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(63,'workflow','0008_stored_name_list',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(64,'workflow','0009_name_list_packed',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(65,'workflow','0010_name_list_derived_displays',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(66,'workflow','0011_prepared_action_credential',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(67,'workflow','0012_agenda_verified_head',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(68,'workflow','0013_prepared_action_agent_told',CURRENT_TIMESTAMP);
INSERT INTO "django_migrations" VALUES(69,'workflow','0014_name_list_without_marks',CURRENT_TIMESTAMP);
CREATE TABLE "auth_group_permissions" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "group_id" integer NOT NULL REFERENCES "auth_group" ("id") DEFERRABLE INITIALLY DEFERRED, "permission_id" integer NOT NULL REFERENCES "auth_permission" ("id") DEFERRABLE INITIALLY DEFERRED);
INSERT INTO "auth_group_permissions" VALUES(1,1,32);
INSERT INTO "auth_group_permissions" VALUES(2,1,40);
INSERT INTO "auth_group_permissions" VALUES(3,1,28);
INSERT INTO "auth_group_permissions" VALUES(4,2,32);
INSERT INTO "auth_group_permissions" VALUES(5,2,40);
INSERT INTO "auth_group_permissions" VALUES(6,2,28);
INSERT INTO "auth_group_permissions" VALUES(7,1,96);
INSERT INTO "auth_group_permissions" VALUES(8,1,68);
INSERT INTO "auth_group_permissions" VALUES(9,1,76);
INSERT INTO "auth_group_permissions" VALUES(10,1,60);
INSERT INTO "auth_group_permissions" VALUES(11,1,52);
INSERT INTO "auth_group_permissions" VALUES(12,1,84);
INSERT INTO "auth_group_permissions" VALUES(13,1,56);
INSERT INTO "auth_group_permissions" VALUES(14,1,57);
INSERT INTO "auth_group_permissions" VALUES(15,1,58);
INSERT INTO "auth_group_permissions" VALUES(16,1,92);
INSERT INTO "auth_group_permissions" VALUES(17,1,93);
INSERT INTO "auth_group_permissions" VALUES(18,1,94);
INSERT INTO "auth_group_permissions" VALUES(19,2,96);
INSERT INTO "auth_group_permissions" VALUES(20,2,68);
INSERT INTO "auth_group_permissions" VALUES(21,2,75);
INSERT INTO "auth_group_permissions" VALUES(22,2,76);
INSERT INTO "auth_group_permissions" VALUES(23,2,60);
INSERT INTO "auth_group_permissions" VALUES(24,2,52);
INSERT INTO "auth_group_permissions" VALUES(25,2,84);
INSERT INTO "auth_group_permissions" VALUES(26,2,56);
INSERT INTO "auth_group_permissions" VALUES(27,2,89);
INSERT INTO "auth_group_permissions" VALUES(28,2,58);
INSERT INTO "auth_group_permissions" VALUES(29,2,92);
INSERT INTO "auth_group_permissions" VALUES(30,2,93);
INSERT INTO "auth_group_permissions" VALUES(31,2,94);
INSERT INTO "auth_group_permissions" VALUES(32,2,57);
INSERT INTO "auth_group_permissions" VALUES(33,1,128);
INSERT INTO "auth_group_permissions" VALUES(34,1,132);
INSERT INTO "auth_group_permissions" VALUES(35,1,120);
INSERT INTO "auth_group_permissions" VALUES(36,2,128);
INSERT INTO "auth_group_permissions" VALUES(37,2,132);
INSERT INTO "auth_group_permissions" VALUES(38,2,120);
INSERT INTO "auth_group_permissions" VALUES(39,2,118);
CREATE TABLE "auth_user_groups" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "user_id" integer NOT NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "group_id" integer NOT NULL REFERENCES "auth_group" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE "auth_user_user_permissions" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "user_id" integer NOT NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "permission_id" integer NOT NULL REFERENCES "auth_permission" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE UNIQUE INDEX "auth_group_permissions_group_id_permission_id_0cd325b0_uniq" ON "auth_group_permissions" ("group_id", "permission_id");
CREATE INDEX "auth_group_permissions_group_id_b120cbf9" ON "auth_group_permissions" ("group_id");
CREATE INDEX "auth_group_permissions_permission_id_84c5c92e" ON "auth_group_permissions" ("permission_id");
CREATE UNIQUE INDEX "auth_user_groups_user_id_group_id_94350c0c_uniq" ON "auth_user_groups" ("user_id", "group_id");
CREATE INDEX "auth_user_groups_user_id_6a12ed8b" ON "auth_user_groups" ("user_id");
CREATE INDEX "auth_user_groups_group_id_97559544" ON "auth_user_groups" ("group_id");
CREATE UNIQUE INDEX "auth_user_user_permissions_user_id_permission_id_14a6b632_uniq" ON "auth_user_user_permissions" ("user_id", "permission_id");
CREATE INDEX "auth_user_user_permissions_user_id_a95ead1b" ON "auth_user_user_permissions" ("user_id");
CREATE INDEX "auth_user_user_permissions_permission_id_1fbb5f2c" ON "auth_user_user_permissions" ("permission_id");
CREATE TABLE "django_admin_log" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "object_id" text NULL, "object_repr" varchar(200) NOT NULL, "action_flag" smallint unsigned NOT NULL CHECK ("action_flag" >= 0), "change_message" text NOT NULL, "content_type_id" integer NULL REFERENCES "django_content_type" ("id") DEFERRABLE INITIALLY DEFERRED, "user_id" integer NOT NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "action_time" datetime NOT NULL);
CREATE INDEX "django_admin_log_content_type_id_c4bce8eb" ON "django_admin_log" ("content_type_id");
CREATE INDEX "django_admin_log_user_id_c564eba6" ON "django_admin_log" ("user_id");
CREATE TABLE "django_content_type" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "app_label" varchar(100) NOT NULL, "model" varchar(100) NOT NULL);
INSERT INTO "django_content_type" VALUES(1,'admin','logentry');
INSERT INTO "django_content_type" VALUES(2,'auth','permission');
INSERT INTO "django_content_type" VALUES(3,'auth','group');
INSERT INTO "django_content_type" VALUES(4,'auth','user');
INSERT INTO "django_content_type" VALUES(5,'contenttypes','contenttype');
INSERT INTO "django_content_type" VALUES(6,'sessions','session');
INSERT INTO "django_content_type" VALUES(7,'oauth2_provider','application');
INSERT INTO "django_content_type" VALUES(8,'oauth2_provider','accesstoken');
INSERT INTO "django_content_type" VALUES(9,'oauth2_provider','grant');
INSERT INTO "django_content_type" VALUES(10,'oauth2_provider','refreshtoken');
INSERT INTO "django_content_type" VALUES(11,'oauth2_provider','idtoken');
INSERT INTO "django_content_type" VALUES(12,'oauth2_provider','devicegrant');
INSERT INTO "django_content_type" VALUES(13,'records','collection');
INSERT INTO "django_content_type" VALUES(14,'records','workspace');
INSERT INTO "django_content_type" VALUES(15,'records','record');
INSERT INTO "django_content_type" VALUES(16,'records','collectionalias');
INSERT INTO "django_content_type" VALUES(17,'records','auditevent');
INSERT INTO "django_content_type" VALUES(18,'records','recordversion');
INSERT INTO "django_content_type" VALUES(19,'records','selfmapping');
INSERT INTO "django_content_type" VALUES(20,'records','revisioncounter');
INSERT INTO "django_content_type" VALUES(21,'records','relationship');
INSERT INTO "django_content_type" VALUES(22,'records','recordalias');
INSERT INTO "django_content_type" VALUES(23,'records','clarificationreview');
INSERT INTO "django_content_type" VALUES(24,'records','accesstoken');
INSERT INTO "django_content_type" VALUES(25,'records','workspacemembership');
INSERT INTO "django_content_type" VALUES(26,'records','namechange');
INSERT INTO "django_content_type" VALUES(27,'records','recordembedding');
INSERT INTO "django_content_type" VALUES(28,'records','collectioncount');
INSERT INTO "django_content_type" VALUES(29,'records','collectioncountchange');
INSERT INTO "django_content_type" VALUES(30,'workflow','preparedaction');
INSERT INTO "django_content_type" VALUES(31,'workflow','reviewticket');
INSERT INTO "django_content_type" VALUES(32,'workflow','agenda');
INSERT INTO "django_content_type" VALUES(33,'workflow','agendaevent');
INSERT INTO "django_content_type" VALUES(34,'workflow','agendaitem');
INSERT INTO "django_content_type" VALUES(35,'workflow','agendaconclusion');
INSERT INTO "django_content_type" VALUES(36,'workflow','agendalayer');
INSERT INTO "django_content_type" VALUES(37,'workflow','readmark');
INSERT INTO "django_content_type" VALUES(38,'workflow','storednamelist');
CREATE UNIQUE INDEX "django_content_type_app_label_model_76bd3d3b_uniq" ON "django_content_type" ("app_label", "model");
CREATE TABLE "auth_permission" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "content_type_id" integer NOT NULL REFERENCES "django_content_type" ("id") DEFERRABLE INITIALLY DEFERRED, "codename" varchar(100) NOT NULL, "name" varchar(255) NOT NULL);
INSERT INTO "auth_permission" VALUES(1,1,'add_logentry','Can add log entry');
INSERT INTO "auth_permission" VALUES(2,1,'change_logentry','Can change log entry');
INSERT INTO "auth_permission" VALUES(3,1,'delete_logentry','Can delete log entry');
INSERT INTO "auth_permission" VALUES(4,1,'view_logentry','Can view log entry');
INSERT INTO "auth_permission" VALUES(5,2,'add_permission','Can add permission');
INSERT INTO "auth_permission" VALUES(6,2,'change_permission','Can change permission');
INSERT INTO "auth_permission" VALUES(7,2,'delete_permission','Can delete permission');
INSERT INTO "auth_permission" VALUES(8,2,'view_permission','Can view permission');
INSERT INTO "auth_permission" VALUES(9,3,'add_group','Can add group');
INSERT INTO "auth_permission" VALUES(10,3,'change_group','Can change group');
INSERT INTO "auth_permission" VALUES(11,3,'delete_group','Can delete group');
INSERT INTO "auth_permission" VALUES(12,3,'view_group','Can view group');
INSERT INTO "auth_permission" VALUES(13,4,'add_user','Can add user');
INSERT INTO "auth_permission" VALUES(14,4,'change_user','Can change user');
INSERT INTO "auth_permission" VALUES(15,4,'delete_user','Can delete user');
INSERT INTO "auth_permission" VALUES(16,4,'view_user','Can view user');
INSERT INTO "auth_permission" VALUES(17,5,'add_contenttype','Can add content type');
INSERT INTO "auth_permission" VALUES(18,5,'change_contenttype','Can change content type');
INSERT INTO "auth_permission" VALUES(19,5,'delete_contenttype','Can delete content type');
INSERT INTO "auth_permission" VALUES(20,5,'view_contenttype','Can view content type');
INSERT INTO "auth_permission" VALUES(21,6,'add_session','Can add session');
INSERT INTO "auth_permission" VALUES(22,6,'change_session','Can change session');
INSERT INTO "auth_permission" VALUES(23,6,'delete_session','Can delete session');
INSERT INTO "auth_permission" VALUES(24,6,'view_session','Can view session');
INSERT INTO "auth_permission" VALUES(25,7,'add_application','Can add application');
INSERT INTO "auth_permission" VALUES(26,7,'change_application','Can change application');
INSERT INTO "auth_permission" VALUES(27,7,'delete_application','Can delete application');
INSERT INTO "auth_permission" VALUES(28,7,'view_application','Can view application');
INSERT INTO "auth_permission" VALUES(29,8,'add_accesstoken','Can add access token');
INSERT INTO "auth_permission" VALUES(30,8,'change_accesstoken','Can change access token');
INSERT INTO "auth_permission" VALUES(31,8,'delete_accesstoken','Can delete access token');
INSERT INTO "auth_permission" VALUES(32,8,'view_accesstoken','Can view access token');
INSERT INTO "auth_permission" VALUES(33,9,'add_grant','Can add grant');
INSERT INTO "auth_permission" VALUES(34,9,'change_grant','Can change grant');
INSERT INTO "auth_permission" VALUES(35,9,'delete_grant','Can delete grant');
INSERT INTO "auth_permission" VALUES(36,9,'view_grant','Can view grant');
INSERT INTO "auth_permission" VALUES(37,10,'add_refreshtoken','Can add refresh token');
INSERT INTO "auth_permission" VALUES(38,10,'change_refreshtoken','Can change refresh token');
INSERT INTO "auth_permission" VALUES(39,10,'delete_refreshtoken','Can delete refresh token');
INSERT INTO "auth_permission" VALUES(40,10,'view_refreshtoken','Can view refresh token');
INSERT INTO "auth_permission" VALUES(41,11,'add_idtoken','Can add id token');
INSERT INTO "auth_permission" VALUES(42,11,'change_idtoken','Can change id token');
INSERT INTO "auth_permission" VALUES(43,11,'delete_idtoken','Can delete id token');
INSERT INTO "auth_permission" VALUES(44,11,'view_idtoken','Can view id token');
INSERT INTO "auth_permission" VALUES(45,12,'add_devicegrant','Can add device grant');
INSERT INTO "auth_permission" VALUES(46,12,'change_devicegrant','Can change device grant');
INSERT INTO "auth_permission" VALUES(47,12,'delete_devicegrant','Can delete device grant');
INSERT INTO "auth_permission" VALUES(48,12,'view_devicegrant','Can view device grant');
INSERT INTO "auth_permission" VALUES(49,13,'add_collection','Can add collection');
INSERT INTO "auth_permission" VALUES(50,13,'change_collection','Can change collection');
INSERT INTO "auth_permission" VALUES(51,13,'delete_collection','Can delete collection');
INSERT INTO "auth_permission" VALUES(52,13,'view_collection','Can view collection');
INSERT INTO "auth_permission" VALUES(53,14,'add_workspace','Can add workspace');
INSERT INTO "auth_permission" VALUES(54,14,'change_workspace','Can change workspace');
INSERT INTO "auth_permission" VALUES(55,14,'delete_workspace','Can delete workspace');
INSERT INTO "auth_permission" VALUES(56,14,'view_workspace','Can view workspace');
INSERT INTO "auth_permission" VALUES(57,15,'add_record','Can add record');
INSERT INTO "auth_permission" VALUES(58,15,'change_record','Can change record');
INSERT INTO "auth_permission" VALUES(59,15,'delete_record','Can delete record');
INSERT INTO "auth_permission" VALUES(60,15,'view_record','Can view record');
INSERT INTO "auth_permission" VALUES(61,16,'add_collectionalias','Can add collection alias');
INSERT INTO "auth_permission" VALUES(62,16,'change_collectionalias','Can change collection alias');
INSERT INTO "auth_permission" VALUES(63,16,'delete_collectionalias','Can delete collection alias');
INSERT INTO "auth_permission" VALUES(64,16,'view_collectionalias','Can view collection alias');
INSERT INTO "auth_permission" VALUES(65,17,'add_auditevent','Can add audit event');
INSERT INTO "auth_permission" VALUES(66,17,'change_auditevent','Can change audit event');
INSERT INTO "auth_permission" VALUES(67,17,'delete_auditevent','Can delete audit event');
INSERT INTO "auth_permission" VALUES(68,17,'view_auditevent','Can view audit event');
INSERT INTO "auth_permission" VALUES(69,18,'add_recordversion','Can add record version');
INSERT INTO "auth_permission" VALUES(70,18,'change_recordversion','Can change record version');
INSERT INTO "auth_permission" VALUES(71,18,'delete_recordversion','Can delete record version');
INSERT INTO "auth_permission" VALUES(72,18,'view_recordversion','Can view record version');
INSERT INTO "auth_permission" VALUES(73,19,'add_selfmapping','Can add self mapping');
INSERT INTO "auth_permission" VALUES(74,19,'change_selfmapping','Can change self mapping');
INSERT INTO "auth_permission" VALUES(75,19,'delete_selfmapping','Can delete self mapping');
INSERT INTO "auth_permission" VALUES(76,19,'view_selfmapping','Can view self mapping');
INSERT INTO "auth_permission" VALUES(77,20,'add_revisioncounter','Can add revision counter');
INSERT INTO "auth_permission" VALUES(78,20,'change_revisioncounter','Can change revision counter');
INSERT INTO "auth_permission" VALUES(79,20,'delete_revisioncounter','Can delete revision counter');
INSERT INTO "auth_permission" VALUES(80,20,'view_revisioncounter','Can view revision counter');
INSERT INTO "auth_permission" VALUES(81,21,'add_relationship','Can add relationship');
INSERT INTO "auth_permission" VALUES(82,21,'change_relationship','Can change relationship');
INSERT INTO "auth_permission" VALUES(83,21,'delete_relationship','Can delete relationship');
INSERT INTO "auth_permission" VALUES(84,21,'view_relationship','Can view relationship');
INSERT INTO "auth_permission" VALUES(85,22,'add_recordalias','Can add record alias');
INSERT INTO "auth_permission" VALUES(86,22,'change_recordalias','Can change record alias');
INSERT INTO "auth_permission" VALUES(87,22,'delete_recordalias','Can delete record alias');
INSERT INTO "auth_permission" VALUES(88,22,'view_recordalias','Can view record alias');
INSERT INTO "auth_permission" VALUES(89,23,'add_clarificationreview','Can add clarification review');
INSERT INTO "auth_permission" VALUES(90,23,'change_clarificationreview','Can change clarification review');
INSERT INTO "auth_permission" VALUES(91,23,'delete_clarificationreview','Can delete clarification review');
INSERT INTO "auth_permission" VALUES(92,23,'view_clarificationreview','Can view clarification review');
INSERT INTO "auth_permission" VALUES(93,24,'add_accesstoken','Can add access token');
INSERT INTO "auth_permission" VALUES(94,24,'change_accesstoken','Can change access token');
INSERT INTO "auth_permission" VALUES(95,24,'delete_accesstoken','Can delete access token');
INSERT INTO "auth_permission" VALUES(96,24,'view_accesstoken','Can view access token');
INSERT INTO "auth_permission" VALUES(97,25,'add_workspacemembership','Can add workspace membership');
INSERT INTO "auth_permission" VALUES(98,25,'change_workspacemembership','Can change workspace membership');
INSERT INTO "auth_permission" VALUES(99,25,'delete_workspacemembership','Can delete workspace membership');
INSERT INTO "auth_permission" VALUES(100,25,'view_workspacemembership','Can view workspace membership');
INSERT INTO "auth_permission" VALUES(101,26,'add_namechange','Can add name change');
INSERT INTO "auth_permission" VALUES(102,26,'change_namechange','Can change name change');
INSERT INTO "auth_permission" VALUES(103,26,'delete_namechange','Can delete name change');
INSERT INTO "auth_permission" VALUES(104,26,'view_namechange','Can view name change');
INSERT INTO "auth_permission" VALUES(105,27,'add_recordembedding','Can add record embedding');
INSERT INTO "auth_permission" VALUES(106,27,'change_recordembedding','Can change record embedding');
INSERT INTO "auth_permission" VALUES(107,27,'delete_recordembedding','Can delete record embedding');
INSERT INTO "auth_permission" VALUES(108,27,'view_recordembedding','Can view record embedding');
INSERT INTO "auth_permission" VALUES(109,28,'add_collectioncount','Can add collection count');
INSERT INTO "auth_permission" VALUES(110,28,'change_collectioncount','Can change collection count');
INSERT INTO "auth_permission" VALUES(111,28,'delete_collectioncount','Can delete collection count');
INSERT INTO "auth_permission" VALUES(112,28,'view_collectioncount','Can view collection count');
INSERT INTO "auth_permission" VALUES(113,29,'add_collectioncountchange','Can add collection count change');
INSERT INTO "auth_permission" VALUES(114,29,'change_collectioncountchange','Can change collection count change');
INSERT INTO "auth_permission" VALUES(115,29,'delete_collectioncountchange','Can delete collection count change');
INSERT INTO "auth_permission" VALUES(116,29,'view_collectioncountchange','Can view collection count change');
INSERT INTO "auth_permission" VALUES(117,30,'add_preparedaction','Can add prepared action');
INSERT INTO "auth_permission" VALUES(118,30,'change_preparedaction','Can change prepared action');
INSERT INTO "auth_permission" VALUES(119,30,'delete_preparedaction','Can delete prepared action');
INSERT INTO "auth_permission" VALUES(120,30,'view_preparedaction','Can view prepared action');
INSERT INTO "auth_permission" VALUES(121,31,'add_reviewticket','Can add review ticket');
INSERT INTO "auth_permission" VALUES(122,31,'change_reviewticket','Can change review ticket');
INSERT INTO "auth_permission" VALUES(123,31,'delete_reviewticket','Can delete review ticket');
INSERT INTO "auth_permission" VALUES(124,31,'view_reviewticket','Can view review ticket');
INSERT INTO "auth_permission" VALUES(125,32,'add_agenda','Can add agenda');
INSERT INTO "auth_permission" VALUES(126,32,'change_agenda','Can change agenda');
INSERT INTO "auth_permission" VALUES(127,32,'delete_agenda','Can delete agenda');
INSERT INTO "auth_permission" VALUES(128,32,'view_agenda','Can view agenda');
INSERT INTO "auth_permission" VALUES(129,33,'add_agendaevent','Can add agenda event');
INSERT INTO "auth_permission" VALUES(130,33,'change_agendaevent','Can change agenda event');
INSERT INTO "auth_permission" VALUES(131,33,'delete_agendaevent','Can delete agenda event');
INSERT INTO "auth_permission" VALUES(132,33,'view_agendaevent','Can view agenda event');
INSERT INTO "auth_permission" VALUES(133,34,'add_agendaitem','Can add agenda item');
INSERT INTO "auth_permission" VALUES(134,34,'change_agendaitem','Can change agenda item');
INSERT INTO "auth_permission" VALUES(135,34,'delete_agendaitem','Can delete agenda item');
INSERT INTO "auth_permission" VALUES(136,34,'view_agendaitem','Can view agenda item');
INSERT INTO "auth_permission" VALUES(137,35,'add_agendaconclusion','Can add agenda conclusion');
INSERT INTO "auth_permission" VALUES(138,35,'change_agendaconclusion','Can change agenda conclusion');
INSERT INTO "auth_permission" VALUES(139,35,'delete_agendaconclusion','Can delete agenda conclusion');
INSERT INTO "auth_permission" VALUES(140,35,'view_agendaconclusion','Can view agenda conclusion');
INSERT INTO "auth_permission" VALUES(141,36,'add_agendalayer','Can add agenda layer');
INSERT INTO "auth_permission" VALUES(142,36,'change_agendalayer','Can change agenda layer');
INSERT INTO "auth_permission" VALUES(143,36,'delete_agendalayer','Can delete agenda layer');
INSERT INTO "auth_permission" VALUES(144,36,'view_agendalayer','Can view agenda layer');
INSERT INTO "auth_permission" VALUES(145,37,'add_readmark','Can add read mark');
INSERT INTO "auth_permission" VALUES(146,37,'change_readmark','Can change read mark');
INSERT INTO "auth_permission" VALUES(147,37,'delete_readmark','Can delete read mark');
INSERT INTO "auth_permission" VALUES(148,37,'view_readmark','Can view read mark');
INSERT INTO "auth_permission" VALUES(149,38,'add_storednamelist','Can add stored name list');
INSERT INTO "auth_permission" VALUES(150,38,'change_storednamelist','Can change stored name list');
INSERT INTO "auth_permission" VALUES(151,38,'delete_storednamelist','Can delete stored name list');
INSERT INTO "auth_permission" VALUES(152,38,'view_storednamelist','Can view stored name list');
CREATE UNIQUE INDEX "auth_permission_content_type_id_codename_01ab375a_uniq" ON "auth_permission" ("content_type_id", "codename");
CREATE INDEX "auth_permission_content_type_id_2f476e4b" ON "auth_permission" ("content_type_id");
CREATE TABLE "auth_group" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "name" varchar(150) NOT NULL UNIQUE);
INSERT INTO "auth_group" VALUES(1,'member');
INSERT INTO "auth_group" VALUES(2,'reviewer');
CREATE TABLE "auth_user" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "password" varchar(128) NOT NULL, "last_login" datetime NULL, "is_superuser" bool NOT NULL, "username" varchar(150) NOT NULL UNIQUE, "last_name" varchar(150) NOT NULL, "email" varchar(254) NOT NULL, "is_staff" bool NOT NULL, "is_active" bool NOT NULL, "date_joined" datetime NOT NULL, "first_name" varchar(150) NOT NULL);
CREATE TABLE "oauth2_provider_idtoken" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "jti" char(32) NOT NULL UNIQUE, "expires" datetime NOT NULL, "scope" text NOT NULL, "created" datetime NOT NULL, "updated" datetime NOT NULL, "application_id" bigint NULL REFERENCES "oauth2_provider_application" ("id") DEFERRABLE INITIALLY DEFERRED, "user_id" integer NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE INDEX "oauth2_provider_idtoken_application_id_08c5ff4f" ON "oauth2_provider_idtoken" ("application_id");
CREATE INDEX "oauth2_provider_idtoken_user_id_dd512b59" ON "oauth2_provider_idtoken" ("user_id");
CREATE TABLE "oauth2_provider_devicegrant" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "device_code" varchar(100) NOT NULL, "user_code" varchar(100) NOT NULL, "interval" integer NOT NULL, "expires" datetime NOT NULL, "status" varchar(64) NOT NULL, "client_id" varchar(100) NOT NULL, "last_checked" datetime NOT NULL, "user_id" integer NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "scope" text NOT NULL, CONSTRAINT "oauth2_provider_devicegrant_unique_device_code" UNIQUE ("device_code"));
CREATE INDEX "oauth2_provider_devicegrant_client_id_229dd06d" ON "oauth2_provider_devicegrant" ("client_id");
CREATE INDEX "oauth2_provider_devicegrant_user_id_1cec5156" ON "oauth2_provider_devicegrant" ("user_id");
CREATE TABLE "oauth2_provider_accesstoken" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "token" text NOT NULL, "expires" datetime NOT NULL, "scope" text NOT NULL, "application_id" bigint NULL REFERENCES "oauth2_provider_application" ("id") DEFERRABLE INITIALLY DEFERRED, "user_id" integer NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "created" datetime NOT NULL, "updated" datetime NOT NULL, "source_refresh_token_id" bigint NULL UNIQUE REFERENCES "oauth2_provider_refreshtoken" ("id") DEFERRABLE INITIALLY DEFERRED, "id_token_id" bigint NULL UNIQUE REFERENCES "oauth2_provider_idtoken" ("id") DEFERRABLE INITIALLY DEFERRED, "token_checksum" varchar(64) NOT NULL UNIQUE, "resource" text NOT NULL CHECK ((JSON_VALID("resource") OR "resource" IS NULL)));
CREATE INDEX "oauth2_provider_accesstoken_application_id_b22886e1" ON "oauth2_provider_accesstoken" ("application_id");
CREATE INDEX "oauth2_provider_accesstoken_user_id_6e4c9a65" ON "oauth2_provider_accesstoken" ("user_id");
CREATE TABLE "oauth2_provider_grant" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "code" varchar(255) NOT NULL UNIQUE, "expires" datetime NOT NULL, "redirect_uri" text NOT NULL, "scope" text NOT NULL, "application_id" bigint NOT NULL REFERENCES "oauth2_provider_application" ("id") DEFERRABLE INITIALLY DEFERRED, "user_id" integer NOT NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "created" datetime NOT NULL, "updated" datetime NOT NULL, "code_challenge" varchar(128) NOT NULL, "code_challenge_method" varchar(10) NOT NULL, "nonce" varchar(255) NOT NULL, "claims" text NOT NULL, "resource" text NOT NULL CHECK ((JSON_VALID("resource") OR "resource" IS NULL)));
CREATE INDEX "oauth2_provider_grant_application_id_81923564" ON "oauth2_provider_grant" ("application_id");
CREATE INDEX "oauth2_provider_grant_user_id_e8f62af8" ON "oauth2_provider_grant" ("user_id");
CREATE TABLE "oauth2_provider_refreshtoken" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "token" text NOT NULL, "access_token_id" bigint NULL UNIQUE REFERENCES "oauth2_provider_accesstoken" ("id") DEFERRABLE INITIALLY DEFERRED, "application_id" bigint NOT NULL REFERENCES "oauth2_provider_application" ("id") DEFERRABLE INITIALLY DEFERRED, "user_id" integer NOT NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "created" datetime NOT NULL, "updated" datetime NOT NULL, "revoked" datetime NULL, "token_family" char(32) NULL, "token_checksum" varchar(64) NOT NULL, "resource" text NOT NULL CHECK ((JSON_VALID("resource") OR "resource" IS NULL)));
CREATE UNIQUE INDEX "oauth2_provider_refreshtoken_token_checksum_revoked_46c81d1d_uniq" ON "oauth2_provider_refreshtoken" ("token_checksum", "revoked");
CREATE INDEX "oauth2_provider_refreshtoken_application_id_2d1c311b" ON "oauth2_provider_refreshtoken" ("application_id");
CREATE INDEX "oauth2_provider_refreshtoken_user_id_da837fce" ON "oauth2_provider_refreshtoken" ("user_id");
CREATE TABLE "oauth2_provider_application" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "redirect_uris" text NOT NULL, "client_type" varchar(32) NOT NULL, "authorization_grant_type" varchar(44) NOT NULL, "client_secret" varchar(255) NOT NULL, "name" varchar(255) NOT NULL, "user_id" integer NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "skip_authorization" bool NOT NULL, "created" datetime NOT NULL, "updated" datetime NOT NULL, "algorithm" varchar(5) NOT NULL, "post_logout_redirect_uris" text NOT NULL, "hash_client_secret" bool NOT NULL, "allowed_origins" text NOT NULL, "registration_source" varchar(32) NOT NULL, "cimd_expires_at" datetime NULL, "client_id" varchar(255) NOT NULL UNIQUE);
CREATE INDEX "oauth2_provider_application_client_secret_53133678" ON "oauth2_provider_application" ("client_secret");
CREATE INDEX "oauth2_provider_application_user_id_79829054" ON "oauth2_provider_application" ("user_id");
CREATE INDEX "oauth2_prov_token_f_996e8a_idx" ON "oauth2_provider_refreshtoken" ("token_family");
CREATE TABLE "records_workspace" ("id" varchar(64) NOT NULL PRIMARY KEY, "created_at" datetime NOT NULL, feed_key varchar(64) NOT NULL DEFAULT '');
CREATE TABLE "records_record" ("id" varchar(36) NOT NULL PRIMARY KEY, "title" varchar(300) NOT NULL, "data" text NOT NULL CHECK ((JSON_VALID("data") OR "data" IS NULL)), "version" integer unsigned NOT NULL CHECK ("version" >= 0), "created_by" varchar(300) NOT NULL, "created_at" datetime NOT NULL, "updated_at" datetime NOT NULL, "archived_at" datetime NULL, "collection_id" varchar(36) NOT NULL REFERENCES "records_collection" ("id") DEFERRABLE INITIALLY DEFERRED, "workspace_id" varchar(64) NOT NULL REFERENCES "records_workspace" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE INDEX "records_record_collection_id_288635e0" ON "records_record" ("collection_id");
CREATE INDEX "records_record_workspace_id_f80f2e79" ON "records_record" ("workspace_id");
CREATE TABLE "records_auditevent" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "actor_id" varchar(300) NOT NULL, "kind" varchar(60) NOT NULL, "entity_type" varchar(30) NOT NULL, "entity_id" varchar(36) NOT NULL, "record_id" varchar(36) NOT NULL, "collection_id" varchar(36) NOT NULL, "before" text NULL CHECK ((JSON_VALID("before") OR "before" IS NULL)), "after" text NULL CHECK ((JSON_VALID("after") OR "after" IS NULL)), "decision_reason" text NOT NULL, "agent_reported_clarification" text NOT NULL, "review_evidence" text NOT NULL CHECK ((JSON_VALID("review_evidence") OR "review_evidence" IS NULL)), "action_id" varchar(36) NOT NULL, "item_index" integer unsigned NULL CHECK ("item_index" >= 0), "created_at" datetime NOT NULL, "workspace_id" varchar(64) NOT NULL REFERENCES "records_workspace" ("id") DEFERRABLE INITIALLY DEFERRED, "credential" varchar(60) NULL, "credential_name" varchar(300) NULL);
CREATE TABLE "records_recordversion" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "version" integer unsigned NOT NULL CHECK ("version" >= 0), "title" varchar(300) NOT NULL, "data" text NOT NULL CHECK ((JSON_VALID("data") OR "data" IS NULL)), "aliases" text NOT NULL CHECK ((JSON_VALID("aliases") OR "aliases" IS NULL)), "archived_at" datetime NULL, "actor_id" varchar(300) NOT NULL, "recorded_at" datetime NOT NULL, "record_id" varchar(36) NOT NULL REFERENCES "records_record" ("id") DEFERRABLE INITIALLY DEFERRED, CONSTRAINT "record_version_unique" UNIQUE ("record_id", "version"));
CREATE TABLE "records_selfmapping" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "actor_id" varchar(300) NOT NULL, "created_at" datetime NOT NULL, "record_id" varchar(36) NOT NULL REFERENCES "records_record" ("id") DEFERRABLE INITIALLY DEFERRED, "workspace_id" varchar(64) NOT NULL REFERENCES "records_workspace" ("id") DEFERRABLE INITIALLY DEFERRED, CONSTRAINT "self_mapping_unique" UNIQUE ("workspace_id", "actor_id"));
CREATE TABLE "records_revisioncounter" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "key" varchar(60) NOT NULL, "value" bigint NOT NULL, "workspace_id" varchar(64) NOT NULL REFERENCES "records_workspace" ("id") DEFERRABLE INITIALLY DEFERRED, CONSTRAINT "revision_counter_unique" UNIQUE ("workspace_id", "key"));
CREATE TABLE "records_relationship" ("id" varchar(36) NOT NULL PRIMARY KEY, "relationship_type" varchar(100) NOT NULL, "created_by" varchar(300) NOT NULL, "created_at" datetime NOT NULL, "source_id" varchar(36) NOT NULL REFERENCES "records_record" ("id") DEFERRABLE INITIALLY DEFERRED, "target_id" varchar(36) NOT NULL REFERENCES "records_record" ("id") DEFERRABLE INITIALLY DEFERRED, "workspace_id" varchar(64) NOT NULL REFERENCES "records_workspace" ("id") DEFERRABLE INITIALLY DEFERRED, CONSTRAINT "relationship_unique" UNIQUE ("source_id", "relationship_type", "target_id"));
CREATE TABLE "records_recordalias" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "alias" varchar(300) NOT NULL, "normalized_alias" varchar(1200) NOT NULL, "created_by" varchar(300) NOT NULL, "created_at" datetime NOT NULL, "record_id" varchar(36) NOT NULL REFERENCES "records_record" ("id") DEFERRABLE INITIALLY DEFERRED, "workspace_id" varchar(64) NOT NULL REFERENCES "records_workspace" ("id") DEFERRABLE INITIALLY DEFERRED, CONSTRAINT "record_alias_unique" UNIQUE ("record_id", "normalized_alias"));
CREATE INDEX "record_page" ON "records_record" ("workspace_id", "collection_id", "created_at", "id");
CREATE INDEX "record_ws_page" ON "records_record" ("workspace_id", "created_at", "id");
CREATE TABLE "records_collectionalias" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "alias" varchar(100) NOT NULL, "normalized_alias" varchar(400) NOT NULL, "created_by" varchar(300) NOT NULL, "created_at" datetime NOT NULL, "collection_id" varchar(36) NOT NULL REFERENCES "records_collection" ("id") DEFERRABLE INITIALLY DEFERRED, "workspace_id" varchar(64) NOT NULL REFERENCES "records_workspace" ("id") DEFERRABLE INITIALLY DEFERRED, CONSTRAINT "collection_alias_unique" UNIQUE ("collection_id", "normalized_alias"));
CREATE INDEX "records_auditevent_workspace_id_cdc4c6ac" ON "records_auditevent" ("workspace_id");
CREATE INDEX "records_recordversion_record_id_664541c0" ON "records_recordversion" ("record_id");
CREATE INDEX "records_selfmapping_record_id_93ec254a" ON "records_selfmapping" ("record_id");
CREATE INDEX "records_selfmapping_workspace_id_b4696ac8" ON "records_selfmapping" ("workspace_id");
CREATE INDEX "records_revisioncounter_workspace_id_b7eec0e9" ON "records_revisioncounter" ("workspace_id");
CREATE INDEX "records_relationship_source_id_b7be26e0" ON "records_relationship" ("source_id");
CREATE INDEX "records_relationship_target_id_2b0c6036" ON "records_relationship" ("target_id");
CREATE INDEX "records_relationship_workspace_id_594bbb2d" ON "records_relationship" ("workspace_id");
CREATE INDEX "relationship_in" ON "records_relationship" ("target_id", "relationship_type");
CREATE INDEX "records_recordalias_record_id_0feef85e" ON "records_recordalias" ("record_id");
CREATE INDEX "records_recordalias_workspace_id_fdb5a321" ON "records_recordalias" ("workspace_id");
CREATE INDEX "records_collectionalias_collection_id_4f043b94" ON "records_collectionalias" ("collection_id");
CREATE INDEX "records_collectionalias_workspace_id_44c79384" ON "records_collectionalias" ("workspace_id");
CREATE TABLE "records_collection" ("id" varchar(36) NOT NULL PRIMARY KEY, "name" varchar(100) NOT NULL, "normalized_name" varchar(400) NOT NULL, "purpose" text NOT NULL, "record_meaning" text NOT NULL, "typical_fields" text NOT NULL CHECK ((JSON_VALID("typical_fields") OR "typical_fields" IS NULL)), "relationship_guidance" text NOT NULL, "requires_approval" bool NOT NULL, "created_by" varchar(300) NOT NULL, "created_at" datetime NOT NULL, "updated_at" datetime NOT NULL, "workspace_id" varchar(64) NOT NULL REFERENCES "records_workspace" ("id") DEFERRABLE INITIALLY DEFERRED, CONSTRAINT "collection_unique_name" UNIQUE ("workspace_id", "normalized_name"));
CREATE INDEX "records_collection_workspace_id_09ba8a59" ON "records_collection" ("workspace_id");
CREATE INDEX "audit_record" ON "records_auditevent" ("workspace_id", "record_id", "created_at", "id");
CREATE INDEX "audit_collection" ON "records_auditevent" ("workspace_id", "collection_id", "created_at", "id");
CREATE INDEX "audit_ws" ON "records_auditevent" ("workspace_id", "created_at", "id");
CREATE TRIGGER records_relationship_ins AFTER INSERT
            ON records_relationship BEGIN
            
INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'links:' || NEW.source_id, 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id);
UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = NEW.workspace_id AND key = 'links:' || NEW.source_id;

            
INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'links:' || NEW.target_id, 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id);
UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = NEW.workspace_id AND key = 'links:' || NEW.target_id;
 END;
CREATE TRIGGER records_relationship_upd AFTER UPDATE ON records_relationship BEGIN
        
INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT OLD.workspace_id, 'links:' || OLD.source_id, 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = OLD.workspace_id);
UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = OLD.workspace_id AND key = 'links:' || OLD.source_id;

        
INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT OLD.workspace_id, 'links:' || OLD.target_id, 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = OLD.workspace_id);
UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = OLD.workspace_id AND key = 'links:' || OLD.target_id;

        
INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'links:' || NEW.source_id, 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id);
UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = NEW.workspace_id AND key = 'links:' || NEW.source_id;

        
INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'links:' || NEW.target_id, 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id);
UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = NEW.workspace_id AND key = 'links:' || NEW.target_id;
 END;
CREATE TRIGGER records_collection_catalog_ins AFTER INSERT ON records_collection
                BEGIN 
INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'catalog', 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id);
UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = NEW.workspace_id AND key = 'catalog';
 END;
CREATE TRIGGER records_collection_catalog_upd AFTER UPDATE ON records_collection
                BEGIN 
INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'catalog', 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id);
UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = NEW.workspace_id AND key = 'catalog';
 END;
CREATE TRIGGER records_collectionalias_catalog_ins AFTER INSERT ON records_collectionalias
                BEGIN 
INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'catalog', 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id);
UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = NEW.workspace_id AND key = 'catalog';
 END;
CREATE TRIGGER records_collectionalias_catalog_upd AFTER UPDATE ON records_collectionalias
                BEGIN 
INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'catalog', 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id);
UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = NEW.workspace_id AND key = 'catalog';
 END;
CREATE TRIGGER records_auditevent_append_only BEFORE UPDATE ON records_auditevent
        BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
CREATE TABLE records_record_fts_key (
            id INTEGER PRIMARY KEY, record_id varchar(36) NOT NULL UNIQUE);
CREATE VIRTUAL TABLE records_record_fts USING fts5(
            title, body, tokenize = 'unicode61 remove_diacritics 2');
CREATE TRIGGER records_record_fts_ins AFTER INSERT ON records_record BEGIN
            INSERT INTO records_record_fts_key(record_id) VALUES (NEW.id);
            INSERT INTO records_record_fts(rowid, title, body) VALUES (
                (SELECT id FROM records_record_fts_key WHERE record_id = NEW.id),
                NEW.title, (SELECT coalesce(group_concat(value, ' '), '') FROM json_tree(NEW.data) WHERE type IN ('text', 'integer', 'real')));
        END;
CREATE TRIGGER records_record_fts_upd AFTER UPDATE ON records_record
        WHEN OLD.title IS NOT NEW.title OR OLD.data IS NOT NEW.data BEGIN
            DELETE FROM records_record_fts WHERE rowid =
                (SELECT id FROM records_record_fts_key WHERE record_id = OLD.id);
            INSERT INTO records_record_fts(rowid, title, body) VALUES (
                (SELECT id FROM records_record_fts_key WHERE record_id = NEW.id),
                NEW.title, (SELECT coalesce(group_concat(value, ' '), '') FROM json_tree(NEW.data) WHERE type IN ('text', 'integer', 'real')));
        END;
CREATE TRIGGER records_record_fts_del AFTER DELETE ON records_record BEGIN
            DELETE FROM records_record_fts WHERE rowid =
                (SELECT id FROM records_record_fts_key WHERE record_id = OLD.id);
            DELETE FROM records_record_fts_key WHERE record_id = OLD.id;
        END;
CREATE TABLE "records_clarificationreview" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "state" varchar(20) NOT NULL, "reviewer_id" varchar(300) NOT NULL, "note" text NOT NULL, "created_at" datetime NOT NULL, "audit_event_id" bigint NOT NULL REFERENCES "records_auditevent" ("id") DEFERRABLE INITIALLY DEFERRED, "workspace_id" varchar(64) NOT NULL REFERENCES "records_workspace" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE INDEX "records_clarificationreview_audit_event_id_65bcd15a" ON "records_clarificationreview" ("audit_event_id");
CREATE INDEX "records_clarificationreview_workspace_id_4de1736c" ON "records_clarificationreview" ("workspace_id");
CREATE INDEX "clarification_review_event" ON "records_clarificationreview" ("audit_event_id", "created_at", "id");
CREATE TABLE "records_accesstoken" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "name" varchar(100) NOT NULL, "prefix" varchar(16) NOT NULL UNIQUE, "key_hash" varchar(64) NOT NULL, "created_at" datetime NOT NULL, "last_used_at" datetime NULL, "revoked_at" datetime NULL, "user_id" integer NOT NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TABLE "records_workspacemembership" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "created_at" datetime NOT NULL, "user_id" integer NOT NULL REFERENCES "auth_user" ("id") DEFERRABLE INITIALLY DEFERRED, "workspace_id" varchar(64) NOT NULL REFERENCES "records_workspace" ("id") DEFERRABLE INITIALLY DEFERRED, CONSTRAINT "membership_unique" UNIQUE ("user_id", "workspace_id"));
CREATE INDEX "records_accesstoken_user_id_198f8da2" ON "records_accesstoken" ("user_id");
CREATE INDEX "access_token_user" ON "records_accesstoken" ("user_id", "revoked_at");
CREATE INDEX "records_workspacemembership_user_id_c84a6bdb" ON "records_workspacemembership" ("user_id");
CREATE INDEX "records_workspacemembership_workspace_id_04889116" ON "records_workspacemembership" ("workspace_id");
CREATE TRIGGER records_relationship_del
        AFTER DELETE ON records_relationship BEGIN
        
UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = OLD.workspace_id AND key = 'links:' || OLD.source_id;

UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = OLD.workspace_id AND key = 'links:' || OLD.target_id;
 END;
CREATE TRIGGER records_collection_catalog_del
        AFTER DELETE ON records_collection BEGIN 
UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = OLD.workspace_id AND key = 'catalog';
 END;
CREATE TRIGGER records_collectionalias_catalog_del AFTER DELETE ON records_collectionalias
        BEGIN 
UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = OLD.workspace_id AND key = 'catalog';
 END;
CREATE INDEX "audit_action" ON "records_auditevent" ("workspace_id", "action_id");
CREATE TABLE "records_namechange" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "workspace_id" varchar(64) NOT NULL, "key" varchar(60) NOT NULL, "revision" bigint NOT NULL, "record_id" varchar(36) NOT NULL);
CREATE TRIGGER records_record_names_ins
        AFTER INSERT ON records_record BEGIN
        
INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'names:' || NEW.collection_id, 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id);

UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = NEW.workspace_id AND key = 'names:' || NEW.collection_id;

INSERT INTO records_namechange(workspace_id, key, revision, record_id)
    SELECT workspace_id, key, value, NEW.id FROM records_revisioncounter
    WHERE workspace_id = NEW.workspace_id AND key = 'names:' || NEW.collection_id;

INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'names:*', 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id);

UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = NEW.workspace_id AND key = 'names:*';

INSERT INTO records_namechange(workspace_id, key, revision, record_id)
    SELECT workspace_id, key, value, NEW.id FROM records_revisioncounter
    WHERE workspace_id = NEW.workspace_id AND key = 'names:*';
 END;
CREATE TRIGGER records_record_names_upd
        AFTER UPDATE ON records_record
        WHEN OLD.title IS NOT NEW.title OR OLD.archived_at IS NOT NEW.archived_at
          OR OLD.collection_id IS NOT NEW.collection_id BEGIN
        
INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'names:' || OLD.collection_id, 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id);

UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = NEW.workspace_id AND key = 'names:' || OLD.collection_id;

INSERT INTO records_namechange(workspace_id, key, revision, record_id)
    SELECT workspace_id, key, value, NEW.id FROM records_revisioncounter
    WHERE workspace_id = NEW.workspace_id AND key = 'names:' || OLD.collection_id;

INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'names:*', 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id);

UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = NEW.workspace_id AND key = 'names:*';

INSERT INTO records_namechange(workspace_id, key, revision, record_id)
    SELECT workspace_id, key, value, NEW.id FROM records_revisioncounter
    WHERE workspace_id = NEW.workspace_id AND key = 'names:*';

        
INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'names:' || NEW.collection_id, 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id);

UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = NEW.workspace_id AND key = 'names:' || NEW.collection_id;

INSERT INTO records_namechange(workspace_id, key, revision, record_id)
    SELECT workspace_id, key, value, NEW.id FROM records_revisioncounter
    WHERE workspace_id = NEW.workspace_id AND key = 'names:' || NEW.collection_id;
 END;
CREATE TRIGGER records_record_names_del
        AFTER DELETE ON records_record BEGIN
        
UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = OLD.workspace_id AND key = 'names:' || OLD.collection_id;

INSERT INTO records_namechange(workspace_id, key, revision, record_id)
    SELECT workspace_id, key, value, OLD.id FROM records_revisioncounter
    WHERE workspace_id = OLD.workspace_id AND key = 'names:' || OLD.collection_id;

UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = OLD.workspace_id AND key = 'names:*';

INSERT INTO records_namechange(workspace_id, key, revision, record_id)
    SELECT workspace_id, key, value, OLD.id FROM records_revisioncounter
    WHERE workspace_id = OLD.workspace_id AND key = 'names:*';
 END;
CREATE TRIGGER records_recordalias_ins
        AFTER INSERT ON records_recordalias BEGIN
        
INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'names:' || (SELECT collection_id FROM records_record WHERE id = NEW.record_id), 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id);

UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = NEW.workspace_id AND key = 'names:' || (SELECT collection_id FROM records_record WHERE id = NEW.record_id);

INSERT INTO records_namechange(workspace_id, key, revision, record_id)
    SELECT workspace_id, key, value, NEW.record_id FROM records_revisioncounter
    WHERE workspace_id = NEW.workspace_id AND key = 'names:' || (SELECT collection_id FROM records_record WHERE id = NEW.record_id);

INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'names:*', 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id);

UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = NEW.workspace_id AND key = 'names:*';

INSERT INTO records_namechange(workspace_id, key, revision, record_id)
    SELECT workspace_id, key, value, NEW.record_id FROM records_revisioncounter
    WHERE workspace_id = NEW.workspace_id AND key = 'names:*';

        END;
CREATE TRIGGER records_recordalias_upd
        AFTER UPDATE ON records_recordalias BEGIN
        
INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'names:' || (SELECT collection_id FROM records_record WHERE id = NEW.record_id), 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id);

UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = NEW.workspace_id AND key = 'names:' || (SELECT collection_id FROM records_record WHERE id = NEW.record_id);

INSERT INTO records_namechange(workspace_id, key, revision, record_id)
    SELECT workspace_id, key, value, NEW.record_id FROM records_revisioncounter
    WHERE workspace_id = NEW.workspace_id AND key = 'names:' || (SELECT collection_id FROM records_record WHERE id = NEW.record_id);

INSERT OR IGNORE INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'names:*', 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id);

UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = NEW.workspace_id AND key = 'names:*';

INSERT INTO records_namechange(workspace_id, key, revision, record_id)
    SELECT workspace_id, key, value, NEW.record_id FROM records_revisioncounter
    WHERE workspace_id = NEW.workspace_id AND key = 'names:*';

        END;
CREATE TRIGGER records_recordalias_del
        AFTER DELETE ON records_recordalias BEGIN
        
UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = OLD.workspace_id AND key = 'names:' || (SELECT collection_id FROM records_record WHERE id = OLD.record_id);

INSERT INTO records_namechange(workspace_id, key, revision, record_id)
    SELECT workspace_id, key, value, OLD.record_id FROM records_revisioncounter
    WHERE workspace_id = OLD.workspace_id AND key = 'names:' || (SELECT collection_id FROM records_record WHERE id = OLD.record_id);

UPDATE records_revisioncounter SET value = value + 1 WHERE workspace_id = OLD.workspace_id AND key = 'names:*';

INSERT INTO records_namechange(workspace_id, key, revision, record_id)
    SELECT workspace_id, key, value, OLD.record_id FROM records_revisioncounter
    WHERE workspace_id = OLD.workspace_id AND key = 'names:*';

        END;
CREATE INDEX "name_change_revision" ON "records_namechange" ("workspace_id", "key", "revision");
CREATE TABLE "records_recordembedding" ("record_id" varchar(36) NOT NULL PRIMARY KEY REFERENCES "records_record" ("id") DEFERRABLE INITIALLY DEFERRED, "model_name" varchar(100) NOT NULL, "model_version" varchar(50) NOT NULL, "record_version" integer unsigned NOT NULL CHECK ("record_version" >= 0), "vector" BLOB NOT NULL, "scale" real NOT NULL, "computed_at" datetime NOT NULL, "workspace_id" varchar(64) NOT NULL REFERENCES "records_workspace" ("id") DEFERRABLE INITIALLY DEFERRED);
CREATE TRIGGER records_record_meaning_ins
        AFTER INSERT ON records_record BEGIN
        
INSERT INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'meaning:records', 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id)
    AND NOT EXISTS (SELECT 1 FROM records_revisioncounter WHERE workspace_id = NEW.workspace_id
                    AND key = 'meaning:records');

UPDATE records_revisioncounter SET value = value + 1
    WHERE workspace_id = NEW.workspace_id AND key = 'meaning:records';
 END;
CREATE TRIGGER records_record_meaning_upd
        AFTER UPDATE ON records_record WHEN OLD.version IS NOT NEW.version OR OLD.title IS NOT NEW.title OR OLD.archived_at IS NOT NEW.archived_at OR OLD.collection_id IS NOT NEW.collection_id BEGIN
        
INSERT INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'meaning:records', 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id)
    AND NOT EXISTS (SELECT 1 FROM records_revisioncounter WHERE workspace_id = NEW.workspace_id
                    AND key = 'meaning:records');

UPDATE records_revisioncounter SET value = value + 1
    WHERE workspace_id = NEW.workspace_id AND key = 'meaning:records';
 END;
CREATE TRIGGER records_record_meaning_del
        AFTER DELETE ON records_record BEGIN
        
UPDATE records_revisioncounter SET value = value + 1
    WHERE workspace_id = OLD.workspace_id AND key = 'meaning:records';
 END;
CREATE TRIGGER records_recordembedding_ins
        AFTER INSERT ON records_recordembedding BEGIN
        
INSERT INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'meaning:vectors', 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id)
    AND NOT EXISTS (SELECT 1 FROM records_revisioncounter WHERE workspace_id = NEW.workspace_id
                    AND key = 'meaning:vectors');

UPDATE records_revisioncounter SET value = value + 1
    WHERE workspace_id = NEW.workspace_id AND key = 'meaning:vectors';
 END;
CREATE TRIGGER records_recordembedding_upd
        AFTER UPDATE ON records_recordembedding BEGIN
        
INSERT INTO records_revisioncounter(workspace_id, key, value)
    SELECT NEW.workspace_id, 'meaning:vectors', 0 WHERE EXISTS (SELECT 1 FROM records_workspace WHERE id = NEW.workspace_id)
    AND NOT EXISTS (SELECT 1 FROM records_revisioncounter WHERE workspace_id = NEW.workspace_id
                    AND key = 'meaning:vectors');

UPDATE records_revisioncounter SET value = value + 1
    WHERE workspace_id = NEW.workspace_id AND key = 'meaning:vectors';
 END;
CREATE TRIGGER records_recordembedding_del
        AFTER DELETE ON records_recordembedding BEGIN
        
UPDATE records_revisioncounter SET value = value + 1
    WHERE workspace_id = OLD.workspace_id AND key = 'meaning:vectors';
 END;
CREATE INDEX "records_recordembedding_workspace_id_d10146ac" ON "records_recordembedding" ("workspace_id");
CREATE INDEX "record_embedding_ws" ON "records_recordembedding" ("workspace_id");
CREATE TABLE "records_collectioncount" ("collection_id" varchar(36) NOT NULL PRIMARY KEY, "workspace_id" varchar(64) NOT NULL, "active" bigint NOT NULL);
CREATE TABLE "records_collectioncountchange" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "collection_id" varchar(36) NOT NULL, "workspace_id" varchar(64) NOT NULL, "delta" integer NOT NULL);
CREATE TRIGGER records_record_count_ins AFTER INSERT ON records_record BEGIN
    
INSERT INTO records_collectioncount(collection_id, workspace_id, active)
    SELECT NEW.collection_id, NEW.workspace_id, 1 WHERE NEW.archived_at IS NULL
    ON CONFLICT(collection_id) DO UPDATE SET active = active + 1;
 END;
CREATE TRIGGER records_record_count_upd AFTER UPDATE ON records_record
    WHEN OLD.collection_id IS NOT NEW.collection_id OR (OLD.archived_at IS NULL) IS NOT (NEW.archived_at IS NULL) BEGIN
    
UPDATE records_collectioncount SET active = active - 1
    WHERE collection_id = OLD.collection_id AND OLD.archived_at IS NULL;

    
INSERT INTO records_collectioncount(collection_id, workspace_id, active)
    SELECT NEW.collection_id, NEW.workspace_id, 1 WHERE NEW.archived_at IS NULL
    ON CONFLICT(collection_id) DO UPDATE SET active = active + 1;
 END;
CREATE TRIGGER records_record_count_del AFTER DELETE ON records_record BEGIN
    
UPDATE records_collectioncount SET active = active - 1
    WHERE collection_id = OLD.collection_id AND OLD.archived_at IS NULL;
 END;
CREATE TRIGGER records_collection_count_del AFTER DELETE ON records_collection BEGIN
    DELETE FROM records_collectioncount WHERE collection_id = OLD.id;
    DELETE FROM records_collectioncountchange WHERE collection_id = OLD.id; END;
CREATE INDEX "records_collectioncountchange_collection_id_1e1f7eed" ON "records_collectioncountchange" ("collection_id");
CREATE INDEX "audit_credential" ON "records_auditevent" ("credential", "created_at") WHERE "credential" IS NOT NULL;
CREATE INDEX "audit_entity" ON "records_auditevent" ("workspace_id", "entity_type", "entity_id", "created_at", "id");
CREATE TABLE "django_session" ("session_key" varchar(40) NOT NULL PRIMARY KEY, "session_data" text NOT NULL, "expire_date" datetime NOT NULL);
CREATE INDEX "django_session_expire_date_a5c62663" ON "django_session" ("expire_date");
CREATE TABLE "workflow_reviewticket" ("id" varchar(36) NOT NULL PRIMARY KEY, "actor_id" varchar(300) NOT NULL, "kind" varchar(20) NOT NULL, "request" text NOT NULL CHECK ((JSON_VALID("request") OR "request" IS NULL)), "answer" text NOT NULL CHECK ((JSON_VALID("answer") OR "answer" IS NULL)), "counters" text NOT NULL CHECK ((JSON_VALID("counters") OR "counters" IS NULL)), "created_at" datetime NOT NULL, "expires_at" datetime NOT NULL, "workspace_id" varchar(64) NOT NULL REFERENCES "records_workspace" ("id") DEFERRABLE INITIALLY DEFERRED, "client_confirmation" text NULL CHECK ((JSON_VALID("client_confirmation") OR "client_confirmation" IS NULL)));
CREATE INDEX "workflow_reviewticket_workspace_id_e16bbbb4" ON "workflow_reviewticket" ("workspace_id");
CREATE INDEX "ticket_scope" ON "workflow_reviewticket" ("workspace_id", "actor_id", "created_at");
CREATE TABLE "workflow_agendaevent" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "sequence" integer unsigned NOT NULL CHECK ("sequence" >= 0), "kind" varchar(40) NOT NULL, "actor_id" varchar(300) NOT NULL, "payload" text NOT NULL CHECK ((JSON_VALID("payload") OR "payload" IS NULL)), "state_hash" varchar(64) NOT NULL, "previous_hash" varchar(64) NOT NULL, "event_hash" varchar(64) NOT NULL, "created_at" datetime NOT NULL, "agenda_id" varchar(36) NOT NULL REFERENCES "workflow_agenda" ("id") DEFERRABLE INITIALLY DEFERRED, CONSTRAINT "agenda_event_sequence" UNIQUE ("agenda_id", "sequence"));
CREATE INDEX "workflow_agendaevent_agenda_id_d15c048f" ON "workflow_agendaevent" ("agenda_id");
CREATE TABLE "workflow_agendaconclusion" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "sequence" integer unsigned NOT NULL CHECK ("sequence" >= 0), "kind" varchar(20) NOT NULL, "text" text NOT NULL, "agenda_revision" integer unsigned NOT NULL CHECK ("agenda_revision" >= 0), "actor_id" varchar(300) NOT NULL, "created_at" datetime NOT NULL, "item_id" varchar(36) NOT NULL REFERENCES "workflow_agendaitem" ("id") DEFERRABLE INITIALLY DEFERRED, CONSTRAINT "agenda_conclusion_sequence" UNIQUE ("item_id", "sequence"));
CREATE INDEX "workflow_agendaconclusion_item_id_b55557a0" ON "workflow_agendaconclusion" ("item_id");
CREATE TABLE "workflow_agendalayer" ("id" varchar(36) NOT NULL PRIMARY KEY, "sequence" integer unsigned NOT NULL CHECK ("sequence" >= 0), "kind" varchar(20) NOT NULL, "depth" integer unsigned NOT NULL CHECK ("depth" >= 0), "label" varchar(100) NOT NULL, "source_reference" text NOT NULL, "unverified_reason" text NOT NULL, "status" varchar(20) NOT NULL, "outcome" text NOT NULL, "opened_at" datetime NOT NULL, "closed_at" datetime NULL, "agenda_id" varchar(36) NOT NULL REFERENCES "workflow_agenda" ("id") DEFERRABLE INITIALLY DEFERRED, "focus_item_id" varchar(36) NULL REFERENCES "workflow_agendaitem" ("id") DEFERRABLE INITIALLY DEFERRED, "parent_item_id" varchar(36) NULL REFERENCES "workflow_agendaitem" ("id") DEFERRABLE INITIALLY DEFERRED, "parent_layer_id" varchar(36) NULL REFERENCES "workflow_agendalayer" ("id") DEFERRABLE INITIALLY DEFERRED, CONSTRAINT "agenda_layer_sequence" UNIQUE ("agenda_id", "sequence"));
CREATE INDEX "workflow_agendalayer_agenda_id_1b05407d" ON "workflow_agendalayer" ("agenda_id");
CREATE INDEX "workflow_agendalayer_focus_item_id_d77d6735" ON "workflow_agendalayer" ("focus_item_id");
CREATE INDEX "workflow_agendalayer_parent_item_id_d36d2bd8" ON "workflow_agendalayer" ("parent_item_id");
CREATE INDEX "workflow_agendalayer_parent_layer_id_b7c22500" ON "workflow_agendalayer" ("parent_layer_id");
CREATE TABLE "workflow_agendaitem" ("id" varchar(36) NOT NULL PRIMARY KEY, "number" integer unsigned NOT NULL CHECK ("number" >= 0), "text" text NOT NULL, "state" varchar(20) NOT NULL, "conclusion" text NOT NULL, "reason" text NOT NULL, "awaiting_synthesis" bool NOT NULL, "record_fingerprint" varchar(64) NOT NULL, "record_version" integer unsigned NULL CHECK ("record_version" >= 0), "sync_status" varchar(30) NOT NULL, "sync_detail" text NULL CHECK ((JSON_VALID("sync_detail") OR "sync_detail" IS NULL)), "record_id" varchar(36) NULL REFERENCES "records_record" ("id") DEFERRABLE INITIALLY DEFERRED, "layer_id" varchar(36) NOT NULL REFERENCES "workflow_agendalayer" ("id") DEFERRABLE INITIALLY DEFERRED, "earlier" text NULL CHECK ((JSON_VALID("earlier") OR "earlier" IS NULL)), CONSTRAINT "agenda_item_number" UNIQUE ("layer_id", "number"));
CREATE INDEX "workflow_agendaitem_record_id_a782fc98" ON "workflow_agendaitem" ("record_id");
CREATE INDEX "workflow_agendaitem_layer_id_b4f0d1c9" ON "workflow_agendaitem" ("layer_id");
CREATE TABLE "workflow_readmark" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "actor_id" varchar(300) NOT NULL, "last_event_id" bigint NOT NULL, "updated_at" datetime NOT NULL, "workspace_id" varchar(64) NOT NULL REFERENCES "records_workspace" ("id") DEFERRABLE INITIALLY DEFERRED, CONSTRAINT "one_read_mark" UNIQUE ("workspace_id", "actor_id"));
CREATE INDEX "workflow_readmark_workspace_id_19dca6d0" ON "workflow_readmark" ("workspace_id");
CREATE TABLE "workflow_preparedaction" ("id" varchar(36) NOT NULL PRIMARY KEY, "actor_id" varchar(300) NOT NULL, "operation" varchar(40) NOT NULL, "arguments" text NOT NULL CHECK ((JSON_VALID("arguments") OR "arguments" IS NULL)), "review_ids" text NOT NULL CHECK ((JSON_VALID("review_ids") OR "review_ids" IS NULL)), "decision_reason" text NOT NULL, "clarification" text NOT NULL, "evidence" text NOT NULL CHECK ((JSON_VALID("evidence") OR "evidence" IS NULL)), "counters" text NOT NULL CHECK ((JSON_VALID("counters") OR "counters" IS NULL)), "preview" text NOT NULL CHECK ((JSON_VALID("preview") OR "preview" IS NULL)), "collection_ids" text NOT NULL CHECK ((JSON_VALID("collection_ids") OR "collection_ids" IS NULL)), "state" varchar(20) NOT NULL, "result" text NULL CHECK ((JSON_VALID("result") OR "result" IS NULL)), "decided_by" varchar(300) NOT NULL, "decision_note" text NOT NULL, "created_at" datetime NOT NULL, "expires_at" datetime NOT NULL, "decided_at" datetime NULL, "workspace_id" varchar(64) NOT NULL REFERENCES "records_workspace" ("id") DEFERRABLE INITIALLY DEFERRED, "stale_reason" text NOT NULL, "dismissed_at" datetime NULL, "dismissed_by" varchar(300) NOT NULL, "credential" varchar(60) NULL, "credential_name" varchar(300) NULL, "agent_told_at" datetime NULL);
CREATE INDEX "workflow_preparedaction_workspace_id_101d1fc9" ON "workflow_preparedaction" ("workspace_id");
CREATE INDEX "action_queue" ON "workflow_preparedaction" ("workspace_id", "state", "created_at");
CREATE TABLE "workflow_agenda" ("id" varchar(36) NOT NULL PRIMARY KEY, "actor_id" varchar(300) NOT NULL, "title" varchar(300) NOT NULL, "status" varchar(20) NOT NULL, "revision" integer unsigned NOT NULL CHECK ("revision" >= 0), "cursor_nonce" varchar(64) NOT NULL, "pending_presentation_id" varchar(40) NOT NULL, "sync_state" varchar(30) NOT NULL, "closing_note" text NOT NULL, "created_at" datetime NOT NULL, "updated_at" datetime NOT NULL, "closed_at" datetime NULL, "bound_collection_id" varchar(36) NULL REFERENCES "records_collection" ("id") DEFERRABLE INITIALLY DEFERRED, "workspace_id" varchar(64) NOT NULL REFERENCES "records_workspace" ("id") DEFERRABLE INITIALLY DEFERRED, "verified_hash" varchar(64) NOT NULL, "verified_sequence" integer unsigned NOT NULL CHECK ("verified_sequence" >= 0));
CREATE INDEX "workflow_agenda_bound_collection_id_7fe74549" ON "workflow_agenda" ("bound_collection_id");
CREATE INDEX "workflow_agenda_workspace_id_b8965155" ON "workflow_agenda" ("workspace_id");
CREATE INDEX "agenda_scope" ON "workflow_agenda" ("workspace_id", "status", "updated_at");
CREATE TRIGGER workflow_agendaevent_unverify_ins
    AFTER INSERT ON workflow_agendaevent WHEN NEW.sequence <=
        (SELECT verified_sequence FROM workflow_agenda WHERE id = NEW.agenda_id)
    BEGIN UPDATE workflow_agenda SET verified_sequence = 0, verified_hash = '' WHERE id = NEW.agenda_id; END;
CREATE TRIGGER workflow_agendaevent_unverify_upd
    AFTER UPDATE ON workflow_agendaevent
    BEGIN UPDATE workflow_agenda SET verified_sequence = 0, verified_hash = '' WHERE id = OLD.agenda_id; UPDATE workflow_agenda SET verified_sequence = 0, verified_hash = '' WHERE id = NEW.agenda_id; END;
CREATE TRIGGER workflow_agendaevent_unverify_del
    AFTER DELETE ON workflow_agendaevent
    BEGIN UPDATE workflow_agenda SET verified_sequence = 0, verified_hash = '' WHERE id = OLD.agenda_id; END;
CREATE TABLE "workflow_storednamelist" ("id" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "scope_key" varchar(60) NOT NULL, "revision" bigint NOT NULL, "names" text NOT NULL, "displays" text NOT NULL, "aliases" text NOT NULL, "workspace_id" varchar(64) NOT NULL REFERENCES "records_workspace" ("id") DEFERRABLE INITIALLY DEFERRED, "record_ids" BLOB NOT NULL, "layout" smallint unsigned NOT NULL CHECK ("layout" >= 0), CONSTRAINT "one_name_list" UNIQUE ("workspace_id", "scope_key"));
CREATE INDEX "workflow_storednamelist_workspace_id_29e74e47" ON "workflow_storednamelist" ("workspace_id");
COMMIT;
PRAGMA foreign_keys=ON;
